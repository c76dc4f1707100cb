import type { ImportServiceClient } from '../../api/types.js';
import {
  configurationIssue,
  DEFAULT_ENGINE_SETTINGS,
  ITEMS_FOR_A_PERSON,
  planAccount,
  planOptionsOf,
  statesWhere,
  type PlanReason,
} from '../../engine/index.js';
import type { AccountRow, AccountState, ItemKind, ItemState, LastPush } from '../../ledger/index.js';
import { recordKeyOf } from '../common/report-rows.js';
import type { V2StatusRecord } from '../../schema/index.js';
import { accountPagesOf, itemPagesOf, type LedgerSource } from '../common/ledger-source.js';
import { exportNeverRead, type ExportNeverRead } from './never-read.js';
import { serviceIndexCollector, type ServiceIndex } from './service-index.js';
import { holdOf, isErrored, joinRow, type StatusRow } from './status-join.js';

// `migrate status <supplier>`: reads the service (two v1 lists, v2 status of open accounts) and
// the ledger (paged), joins them per account (status-join.ts), and tallies. The service's lists
// are whole arrays (the service has no pagination: docs/service.md "Status and list endpoints"), read as they
// arrive into one compact index (service-index.ts); the ledger side is read page by page and rows are handed to
// `onRow` as they are made.

/** Ledger states whose service status is worth asking (v2 tells PENDING/IN_PROGRESS/ERRORED and latest_error). */
const OPEN_STATES = statesWhere('statusAsked');
const OUTSTANDING_ITEMS: readonly ItemState[] = ['pending', 'sending', 'held', 'failed', 'unknown'];
/** Records a person must act on: refused by the service, held back as invalid, of unknown outcome. */
export const NEEDING_PERSON: readonly ItemState[] = ITEMS_FOR_A_PERSON;
const WAITING_ITEMS: readonly ItemState[] = ['pending', 'sending'];

export interface StatusInput {
  supplier: string;
  ledger: LedgerSource | undefined;
  client: ImportServiceClient | undefined;
  /** At most this many v2 status requests (one per open account). */
  maxStatusChecks: number;
  /** At most this many entries in each list of the summary (counts are always complete). */
  maxListed: number;
  pageSize?: number;
  onRow?: (row: StatusRow) => void;
  /** Awaited after each page of rows (the JSON printer writes them out with back-pressure). */
  onPage?: () => Promise<void>;
}

export interface OutstandingItem {
  external_account_number: string;
  record: string;
  state: ItemState;
  /** The state of the record's account, and what holds the record in an operator's words. */
  account_state: AccountState;
  held_by: string;
  code: string | null;
  file: string | null;
  line: number | null;
}

/** An account or record changed in the export after it was sent, where the export now has it. */
export interface ChangedListed {
  external_account_number: string;
  record: string;
  /** The record's key (empty for an account and a note: a note is named by its file and line). */
  record_key: string;
  file: string | null;
  line: number | null;
}

/** A listed account the ledger and the service disagree on. */
export interface DiffersRow {
  external_account_number: string;
  state: string;
  service: string;
  /** Where the two platform account numbers differ: the ledger's, and the service's. */
  ledger_platform_account_number?: string;
  platform_account_number?: string | null;
}

export interface StatusSummary {
  import_supplier: string;
  generated_at: string;
  sources: { ledger: boolean; service: boolean };
  counts: {
    ledger: Partial<Record<AccountState, number>> | null;
    service: {
      all: number;
      imported: number;
      pending: number;
      status_checked: number;
      status_not_checked: number;
      errored: number;
    } | null;
    errored: number;
    only_in_ledger: number;
    only_on_service: number;
    differs: number;
    items_outstanding: Record<string, Partial<Record<ItemState, number>>> | null;
    /** Records done, per kind. */
    items_done: Record<string, number> | null;
  };
  errored: Array<{ external_account_number: string; code: string; detail: string }>;
  pending_on_service: string[];
  only_in_ledger: Array<{ external_account_number: string; state: string }>;
  only_on_service: Array<{ external_account_number: string; platform_account_number: string | null }>;
  /** With both platform account numbers where they differ (a contradiction a person settles). */
  differs: DiffersRow[];
  items_outstanding: OutstandingItem[];
  /** The most frequent last-error codes of accounts and records not done (ledger). */
  top_error_codes: Array<{ code: string; count: number }>;
  /**
   * What a plain `migrate push` would do with the ledger's accounts (engine/plan.ts): accounts per plan reason, and the
   * records waiting to be sent of those accounts, per reason (records of accounts the push leaves alone, such as
   * invalid or ERRORED ones, are counted under that reason: the push does not send them). Null without a ledger.
   */
  push_plan: { accounts: Partial<Record<PlanReason, number>>; records: Partial<Record<PlanReason, number>> } | null;
  /**
   * Accounts held back as invalid for a refusal of the service's configuration by an earlier version (an import
   * supplier not set up yet), by code: `push --retry-invalid CODE` sends them again.
   */
  held_for_configuration: Record<string, number>;
  /**
   * Accounts and records changed in the export after they were sent (the service cannot update them: the platform keeps
   * what was sent, and a push never sends them again), the first `maxListed` of them listed; null without a ledger.
   */
  changed_after_import: {
    accounts: number;
    records: Partial<Record<ItemKind, number>>;
    listed: ChangedListed[];
  } | null;
  /**
   * Transactions the service refused as dated outside its open statement period, or moved into it (forcing declared),
   * with one of their recorded details (the service's words, naming the period); null without a ledger or when none
   * was. Counted over the whole ledger.
   */
  open_period: { refused: number; moved: number; moved_accounts: number; details: string[] } | null;
  /** The last push run of the ledger: how it ended, and why when it stopped on a fatal failure. */
  last_push: LastPush | null;
  /** The accounts of the last push's export no push has read (it stopped while reading); null when it finished. */
  export: ExportNeverRead | null;
  /** What to do next, most urgent first (status-verdict.ts fills it in). */
  next_steps: string[];
}

export async function gatherStatus(input: StatusInput): Promise<StatusSummary> {
  const { supplier, ledger, client } = input;
  const service = client === undefined ? undefined : await readLists(client, supplier);
  const v2 =
    client === undefined ? new Map<string, V2StatusRecord | null>() : await checkOpenAccounts(client, input, service);
  const summary = emptySummary(input, service);
  summary.counts.service = service === undefined ? null : serviceCounts(service, v2.size, input);
  const take = (row: StatusRow): void => {
    tally(summary, row, input.maxListed);
    input.onRow?.(row);
  };
  const online = service !== undefined;
  if (ledger !== undefined) {
    for await (const page of accountPagesOf(ledger, {
      supplier,
      ...(input.pageSize === undefined ? {} : { pageSize: input.pageSize }),
    })) {
      planPage(summary, ledger, page);
      for (const account of page) {
        const number = account.externalAccountNumber;
        take(
          joinRow({
            supplier,
            externalAccountNumber: number,
            account,
            // What is left unclaimed in the index afterwards is what only the service knows.
            entry: service?.claim(number),
            online,
            v2: v2.get(number),
          }),
        );
      }
      await input.onPage?.();
    }
  }
  let sincePage = 0;
  for (const [number, entry] of service?.unclaimed() ?? []) {
    take(joinRow({ supplier, externalAccountNumber: number, account: undefined, entry, online, v2: v2.get(number) }));
    if ((sincePage += 1) % 1000 === 0) await input.onPage?.();
  }
  if (ledger !== undefined) {
    await addOutstandingItems(summary, ledger, supplier, input.maxListed);
    summary.top_error_codes = ledger.topErrorCodes(supplier, 5);
    summary.changed_after_import = changedOf(ledger, supplier, input.maxListed);
    const period = ledger.read.counts().openPeriod;
    summary.open_period =
      period === undefined
        ? null
        : {
            refused: period.refused,
            moved: period.moved,
            moved_accounts: period.movedAccounts,
            details: period.details,
          };
    summary.last_push = ledger.lastPush() ?? null;
    summary.export = await exportNeverRead(ledger);
  }
  return summary;
}

function changedOf(
  ledger: LedgerSource,
  supplier: string,
  max: number,
): NonNullable<StatusSummary['changed_after_import']> {
  const { accounts, records, listed } = ledger.read.changedAfterImport(supplier, max);
  return {
    accounts,
    records,
    listed: listed.map((row) => ({
      external_account_number: row.externalAccountNumber,
      record: row.record,
      record_key: row.record === 'account' ? '' : recordKeyOf(row.record, row.naturalKey),
      file: row.file,
      line: row.line,
    })),
  };
}

/** A plain push: it waits for processing, leaves ERRORED accounts alone, takes every step. */
const PLAIN_PUSH = planOptionsOf(DEFAULT_ENGINE_SETTINGS);

/** What a plain push would do with one page of accounts (engine/plan.ts), tallied into the summary. */
function planPage(summary: StatusSummary, ledger: LedgerSource, page: readonly AccountRow[]): void {
  const plan = (summary.push_plan ??= { accounts: {}, records: {} });
  const waiting = ledger.read.waitingItemsOf(page.map((account) => account.id));
  for (const account of page) {
    const pending = waiting.get(account.id) ?? {};
    const { reason } = planAccount(account, pending, PLAIN_PUSH);
    plan.accounts[reason] = (plan.accounts[reason] ?? 0) + 1;
    const records = Object.values(pending).reduce((total, n) => total + n, 0);
    if (records > 0) plan.records[reason] = (plan.records[reason] ?? 0) + records;
    const held = reason === 'invalid' ? heldForConfiguration(account) : undefined;
    if (held !== undefined) summary.held_for_configuration[held] = (summary.held_for_configuration[held] ?? 0) + 1;
  }
}

/** The code an account was held back for when the service refused the run's configuration, not its data. */
function heldForConfiguration(account: AccountRow): string | undefined {
  const error = account.error;
  return error !== null && configurationIssue([{ attr: error.attr, code: error.code }]) ? error.code : undefined;
}

/** The all-imports list, with the pending list marking staged processes (and adding those the all-list missed). */
async function readLists(client: ImportServiceClient, supplier: string): Promise<ServiceIndex> {
  const [all, pending] = await Promise.all([
    client.listAllImports(supplier, serviceIndexCollector),
    client.listPendingImports(supplier, serviceIndexCollector),
  ]);
  all.addPending(pending);
  return all;
}

/** v2 status of the ledger's open accounts (or, without a ledger, of the service's pending ones), bounded. */
async function checkOpenAccounts(
  client: ImportServiceClient,
  input: StatusInput,
  service: ServiceIndex | undefined,
): Promise<Map<string, V2StatusRecord | null>> {
  const numbers =
    input.ledger !== undefined
      ? await openAccountNumbers(input.ledger, input.supplier, input.maxStatusChecks)
      : (service?.pendingNumbers(input.maxStatusChecks) ?? []);
  const answers = new Map<string, V2StatusRecord | null>();
  // A few at a time: the client paces itself too, this only bounds what is queued.
  for (let start = 0; start < numbers.length; start += 8) {
    const chunk = numbers.slice(start, start + 8);
    const results = await Promise.all(chunk.map((number) => client.getImportStatus(input.supplier, number)));
    chunk.forEach((number, index) => answers.set(number, results[index] ?? null));
  }
  return answers;
}

async function openAccountNumbers(ledger: LedgerSource, supplier: string, max: number): Promise<string[]> {
  const numbers: string[] = [];
  if (max === 0) return numbers;
  for await (const page of accountPagesOf(ledger, { supplier, states: OPEN_STATES, pageSize: Math.min(max, 1000) })) {
    for (const account of page) {
      numbers.push(account.externalAccountNumber);
      if (numbers.length >= max) return numbers;
    }
  }
  return numbers;
}

function serviceCounts(
  service: ServiceIndex,
  checked: number,
  input: StatusInput,
): NonNullable<StatusSummary['counts']['service']> {
  const { pending } = service;
  const open = input.ledger?.counts(input.supplier).accounts;
  const openTotal = open === undefined ? pending : OPEN_STATES.reduce((sum, state) => sum + (open[state] ?? 0), 0);
  return {
    all: service.size,
    imported: service.size - pending,
    pending,
    status_checked: checked,
    status_not_checked: Math.max(0, openTotal - checked),
    errored: 0,
  };
}

function emptySummary(input: StatusInput, service: ServiceIndex | undefined): StatusSummary {
  const ledgerCounts = input.ledger?.counts(input.supplier);
  return {
    import_supplier: input.supplier,
    generated_at: new Date().toISOString(),
    sources: { ledger: input.ledger !== undefined, service: service !== undefined },
    counts: {
      ledger: ledgerCounts?.accounts ?? null,
      service: null,
      errored: 0,
      only_in_ledger: 0,
      only_on_service: 0,
      differs: 0,
      items_outstanding: ledgerCounts === undefined ? null : outstandingCounts(ledgerCounts.items),
      items_done:
        ledgerCounts === undefined
          ? null
          : Object.fromEntries(Object.entries(ledgerCounts.items).map(([kind, states]) => [kind, states.done ?? 0])),
    },
    errored: [],
    pending_on_service: [],
    only_in_ledger: [],
    only_on_service: [],
    differs: [],
    items_outstanding: [],
    top_error_codes: [],
    push_plan: null,
    held_for_configuration: {},
    changed_after_import: null,
    open_period: null,
    last_push: null,
    export: null,
    next_steps: [],
  };
}

function outstandingCounts(
  items: Record<string, Partial<Record<ItemState, number>>>,
): Record<string, Partial<Record<ItemState, number>>> {
  const result: Record<string, Partial<Record<ItemState, number>>> = {};
  for (const [kind, states] of Object.entries(items)) {
    const kept = Object.fromEntries(
      Object.entries(states).filter(([state]) => OUTSTANDING_ITEMS.some((kept) => kept === state)),
    );
    if (Object.keys(kept).length > 0) result[kind] = kept;
  }
  return result;
}

function push<T>(list: T[], value: T, max: number): void {
  if (list.length < max) list.push(value);
}

function tally(summary: StatusSummary, row: StatusRow, max: number): void {
  const number = row.external_account_number;
  if (isErrored(row)) {
    summary.counts.errored += 1;
    if (summary.counts.service !== null && row.service_status !== null) summary.counts.service.errored += 1;
    push(
      summary.errored,
      { external_account_number: number, code: row.latest_error?.code ?? '', detail: row.latest_error?.detail ?? '' },
      max,
    );
  }
  // ERRORED processes stay on the pending list (no account exists): listed once, with their error, above.
  else if (row.service === 'pending') push(summary.pending_on_service, number, max);
  if (row.mismatch === 'only_in_ledger') {
    summary.counts.only_in_ledger += 1;
    push(summary.only_in_ledger, { external_account_number: number, state: row.state ?? '' }, max);
  } else if (row.mismatch === 'only_on_service') {
    summary.counts.only_on_service += 1;
    push(
      summary.only_on_service,
      { external_account_number: number, platform_account_number: row.platform_account_number },
      max,
    );
  } else if (row.mismatch === 'differs') {
    summary.counts.differs += 1;
    const numbers =
      row.ledger_platform_account_number === undefined
        ? {}
        : {
            ledger_platform_account_number: row.ledger_platform_account_number,
            platform_account_number: row.platform_account_number,
          };
    const service = row.service_status ?? row.service ?? '';
    push(summary.differs, { external_account_number: number, state: row.state ?? '', service, ...numbers }, max);
  }
}

async function addOutstandingItems(
  summary: StatusSummary,
  ledger: LedgerSource,
  supplier: string,
  max: number,
): Promise<void> {
  if (max === 0) return;
  // What needs a person first (refused, held back, of unknown outcome), then what waits: a bounded list must never hide
  // a refused payment instruction behind hundreds of notes waiting for their account.
  for (const states of [NEEDING_PERSON, WAITING_ITEMS]) await addItemsIn(summary, ledger, { supplier, states, max });
}

async function addItemsIn(
  summary: StatusSummary,
  ledger: LedgerSource,
  { supplier, states, max }: { supplier: string; states: readonly ItemState[]; max: number },
): Promise<void> {
  // Each list (needing a person, waiting) is bounded on its own, as every list of status is.
  const until = summary.items_outstanding.length + max;
  for await (const page of itemPagesOf(ledger, { supplier, states, pageSize: max })) {
    for (const item of page) {
      if (summary.items_outstanding.length >= until) return;
      summary.items_outstanding.push({
        external_account_number: item.externalAccountNumber,
        record: item.kind,
        state: item.state,
        account_state: item.accountState,
        held_by: holdOf(item.state, item.accountState),
        code: item.error?.code ?? null,
        file: item.originFile,
        line: item.originLine,
      });
    }
  }
}
