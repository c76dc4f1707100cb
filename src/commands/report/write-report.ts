import { chmodSync, createWriteStream, renameSync, rmSync, writeFileSync } from 'node:fs';
import { makePrivateDirs } from '../../private-files.js';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { statesWhere, statesWithWork } from '../../engine/index.js';
import {
  CONTROL_FILES,
  CONTROL_TOTALS_COLUMNS,
  controlSummary,
  controlTotalRows,
  readControlReport,
  RECONCILIATION_COLUMNS,
  reconciliationRows,
  UNUSED_ROWS_COLUMNS,
  unusedRowRecords,
  type ControlSummary,
} from './control-report.js';
import { spreadsheetCsvOptions } from '../../output/spreadsheet-safe.js';
import { refuseForeignTarget, temporaryBeside } from '../../output/output-file.js';
import {
  ITEM_STATES,
  type AccountState,
  type ItemKind,
  type ItemState,
  type ItemWithAccount,
} from '../../ledger/index.js';
import { accountPagesOf, itemPagesOf, type LedgerSource } from '../common/ledger-source.js';
import {
  ACCOUNTS_COLUMNS,
  accountFixRows,
  accountRetryRow,
  accountsCsvRow,
  FIX_DATA_COLUMNS,
  itemFixRow,
  itemRetryRow,
  listedWithAccount,
  RECORDS_COLUMNS,
  recordRow,
  RETRY_COLUMNS,
  UNKNOWN_COLUMNS,
  unknownRow,
  type CsvRecord,
} from '../common/report-rows.js';

// `migrate report`: the ledger, written as files keyed by external account number.
// Streamed: pages of the ledger flow through csv-stringify into the file with back-pressure, so
// memory stays flat at a million accounts. Files are 0600 (they hold account numbers and the
// service's messages, which may quote personal data) and appear whole or not at all (written
// to `.partial`, then renamed): an operator never reads half a report.

export const REPORT_FILES = {
  accounts: 'accounts.csv',
  fixData: 'fix-data.csv',
  retry: 'retry.csv',
  unknown: 'unknown-outcome.csv',
  records: 'records.csv',
  ...CONTROL_FILES,
  summary: 'summary.json',
} as const;

export interface ReportOptions {
  outDir: string;
  /** Only this import supplier's accounts; all when undefined. */
  supplier?: string | undefined;
  /** The state directory, or the PostgreSQL ledger's URL without its password (summary.json's `state_dir`). */
  ledgerLabel: string;
  pageSize?: number;
}

export interface ReportSummary {
  generated_at: string;
  state_dir: string;
  import_supplier: string | null;
  accounts: Partial<Record<AccountState, number>>;
  items: Record<string, Partial<Record<ItemState, number>>>;
  files: Record<string, { path: string; rows: number }>;
  /** Accounts and records, per kind, changed in the export after they were sent: the platform keeps what was sent. */
  changed_after_import: { accounts: number; records: Partial<Record<ItemKind, number>> };
  /**
   * fix-data.csv's rows and the accounts they name: what needs action, counted as the file is written; of those, the
   * accounts done on the platform with a record the service refused (not done: the refused record is a failure).
   */
  fix_data: { rows: number; accounts: number; done_with_refused_records: number };
  top_error_codes: Array<{ code: string; count: number }>;
  /** From the legacy files to the platform (docs/control-totals.md): what the three control CSVs hold, and more. */
  control_totals: ControlSummary;
  runs: Array<{
    id: number;
    command: string;
    started_at: string;
    ended_at: string | null;
    status: string;
    exit_code: number | null;
  }>;
}

/** Writes every report file into `outDir` (created 0700 when missing); returns what summary.json holds. */
export async function writeReport(source: LedgerSource, options: ReportOptions): Promise<ReportSummary> {
  // An existing directory keeps its mode (it may be shared, e.g. the working directory); the files are 0600 whatever it
  // is.
  makePrivateDirs(options.outDir);
  const page = options.pageSize ?? 1000;
  const scope = { source, supplier: options.supplier, page };
  const files: ReportSummary['files'] = {};
  const write = async (
    name: string,
    columns: readonly string[],
    rows: AsyncIterable<CsvRecord> | Iterable<CsvRecord>,
  ): Promise<void> => {
    const path = join(options.outDir, name);
    files[name] = { path, rows: await writeCsv(path, columns, rows) };
  };
  await write(REPORT_FILES.accounts, ACCOUNTS_COLUMNS, accountsRows(scope));
  const needingAction = new Set<number>();
  const doneWithRefused = new Set<number>();
  await write(REPORT_FILES.fixData, FIX_DATA_COLUMNS, fixDataRows(scope, needingAction, doneWithRefused));
  await write(REPORT_FILES.retry, RETRY_COLUMNS, retryRows(scope));
  await write(
    REPORT_FILES.unknown,
    UNKNOWN_COLUMNS,
    itemRows(scope, ['unknown'], (item) => [unknownRow(item)]),
  );
  await write(
    REPORT_FILES.records,
    RECORDS_COLUMNS,
    itemRows(scope, ITEM_STATES, (item) => [recordRow(item)]),
  );
  const control = await readControlReport(source, { supplier: options.supplier, pageSize: page });
  await write(REPORT_FILES.reconciliation, RECONCILIATION_COLUMNS, reconciliationRows(control));
  await write(REPORT_FILES.controlTotals, CONTROL_TOTALS_COLUMNS, controlTotalRows(control));
  await write(REPORT_FILES.unusedRows, UNUSED_ROWS_COLUMNS, unusedRowRecords(source, control));
  const counts = source.counts(options.supplier);
  const summary: ReportSummary = {
    generated_at: new Date().toISOString(),
    state_dir: options.ledgerLabel,
    import_supplier: options.supplier ?? null,
    accounts: counts.accounts,
    items: counts.items,
    files,
    changed_after_import: changedCounts(source, options.supplier),
    fix_data: {
      rows: files[REPORT_FILES.fixData]?.rows ?? 0,
      accounts: needingAction.size,
      done_with_refused_records: doneWithRefused.size,
    },
    top_error_codes: source.topErrorCodes(options.supplier, 10),
    control_totals: controlSummary(control, files[REPORT_FILES.unusedRows]?.rows ?? 0),
    runs: source.read.runs(10).map((run) => ({
      id: run.id,
      command: run.command,
      started_at: run.startedAt,
      ended_at: run.endedAt,
      status: run.status,
      exit_code: run.exitCode,
    })),
  };
  const summaryPath = join(options.outDir, REPORT_FILES.summary);
  files[REPORT_FILES.summary] = { path: summaryPath, rows: 1 };
  writeWhole(summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

function changedCounts(source: LedgerSource, supplier: string | undefined): ReportSummary['changed_after_import'] {
  const { accounts, records } = source.read.changedAfterImport(supplier, 0);
  return { accounts, records };
}

interface Scope {
  source: LedgerSource;
  supplier: string | undefined;
  page: number;
}

async function writeCsv(
  path: string,
  columns: readonly string[],
  rows: AsyncIterable<CsvRecord> | Iterable<CsvRecord>,
): Promise<number> {
  const partial = temporaryBeside(path);
  let count = 0;
  async function* counted(): AsyncGenerator<CsvRecord> {
    for await (const row of rows) {
      count += 1;
      yield row;
    }
  }
  try {
    await pipeline(
      Readable.from(counted()),
      stringify(spreadsheetCsvOptions(columns, true)),
      createWriteStream(partial, { flags: 'wx', mode: 0o600 }),
    );
    chmodSync(partial, 0o600);
    refuseForeignTarget('--out', path);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return count;
}

/** Writes `content` to a temporary beside `path` (output-file.ts), renamed over it: whole or not at all, 0600. */
export function writeWhole(path: string, content: string): void {
  const partial = temporaryBeside(path);
  try {
    writeFileSync(partial, content, { flag: 'wx', mode: 0o600 });
    chmodSync(partial, 0o600);
    refuseForeignTarget('--out', path);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
}

function accountPages(
  scope: Scope,
  states?: readonly AccountState[],
): AsyncGenerator<ReturnType<LedgerSource['accounts']>> {
  return accountPagesOf(scope.source, {
    supplier: scope.supplier,
    ...(states ? { states } : {}),
    pageSize: scope.page,
  });
}

function itemPages(scope: Scope, states: readonly ItemState[]): AsyncGenerator<ItemWithAccount[]> {
  return itemPagesOf(scope.source, { supplier: scope.supplier, states, pageSize: scope.page });
}

async function* accountsRows(scope: Scope): AsyncGenerator<CsvRecord> {
  for await (const accounts of accountPages(scope)) {
    const tallies = scope.source.itemTallies(accounts.map((account) => account.id));
    for (const account of accounts) yield accountsCsvRow(account, tallies.get(account.id));
  }
}

/**
 * Every data error: invalid and ERRORED accounts, then records held back or refused; `accounts` gets their ids,
 * `doneWithRefused` those of done accounts with a refused record.
 */
async function* fixDataRows(
  scope: Scope,
  accounts: Set<number>,
  doneWithRefused: Set<number>,
): AsyncGenerator<CsvRecord> {
  for await (const page of accountPages(scope, statesWhere('needsPerson'))) {
    const issues = scope.source.issuesOf(page.map((account) => account.id));
    for (const account of page) {
      const rows = accountFixRows(account, issues.get(account.id) ?? []);
      if (rows.length > 0) accounts.add(account.id);
      yield* rows;
    }
  }
  for await (const items of itemPages(scope, ['held', 'failed'])) {
    const issues = scope.source.issuesOf([
      ...new Set(items.filter((item) => item.accountState === 'invalid').map((item) => item.accountId)),
    ]);
    for (const item of items) {
      if (item.state === 'held' && listedWithAccount(item, issues.get(item.accountId))) continue;
      accounts.add(item.accountId);
      if (item.state === 'failed' && item.accountState === 'done') doneWithRefused.add(item.accountId);
      yield itemFixRow(item);
    }
  }
}

/** What the next run retries: accounts with a transient failure or an unconfirmed create, records not settled. */
async function* retryRows(scope: Scope): AsyncGenerator<CsvRecord> {
  for await (const accounts of accountPages(scope, statesWithWork(false))) {
    for (const account of accounts) {
      const row = accountRetryRow(account);
      if (row !== undefined) yield row;
    }
  }
  // A pending record without an error has simply not been sent yet: not a failure.
  yield* itemRows(scope, ['pending', 'sending'], (item) =>
    item.state === 'sending' || item.error !== null ? [itemRetryRow(item)] : [],
  );
}

async function* itemRows(
  scope: Scope,
  states: readonly ItemState[],
  rowsOf: (item: ItemWithAccount) => CsvRecord[],
): AsyncGenerator<CsvRecord> {
  for await (const items of itemPages(scope, states)) {
    for (const item of items) yield* rowsOf(item);
  }
}
