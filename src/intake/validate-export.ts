import PQueue from 'p-queue';
import type { ExportReader, ExportSummary } from './index.js';
import { concatIssues, IssueSpool, type IssueList } from './issue-spool.js';
import type { OrderProof } from './order-proof.js';
import { NearKeys, type NearKey } from './near-keys.js';
import type { ExportAccount, ExportEntry, SourceIssue } from '../mapping/types.js';
import type { ControlCount, KindTotal, SourceFileUse, UnusedRow } from '../ledger/index.js';
import { ControlTally } from './control-totals.js';

// What `migrate validate` reports, built from an export: counts, every error in account order,
// and counts per code. Errors are spooled (issue-spool.ts): memory stays flat however many there
// are; the result's close() frees them.

export interface ExportValidation {
  ok: boolean;
  accounts: { total: number; valid: number; invalid: number };
  /** File-level problems first, then per account in export order (post-import records of other accounts among them). */
  errors: IssueList;
  /**
   * How many of `errors` are file-level problems (the first ones): rows out of place, unknown columns, records without
   * an account.
   */
  fileErrors: number;
  byCode: Record<string, number>;
  orphans: { accounts: number; records: number; numbers: string[] };
  /** Note rows identical to an earlier one of their account (same body, created_at and fields): counted once. */
  duplicateNotes: number;
  /**
   * Transactions dated before the open statement period that the service will move into it (the period given, forcing
   * declared): validate warns with the count. Without forcing each is an error instead.
   */
  beforeOpenPeriod: number;
  /** Values dropped under the mapping file's `on_invalid: omit` (OmittedIssues, with their values), in export order. */
  omitted: IssueList;
  /**
   * Problems that hold nothing back (a customer given twice on an account, a team's check of severity warning), in
   * export order.
   */
  warnings: IssueList;
  /** Orphan records' numbers that match an account of the export but for spaces, leading zeros or case. */
  nearKeys: NearKey[];
  summary: ExportSummary;
  /** What came in and what may go out (docs/control-totals.md): the `shaped` and `valid` stages, the sources' rows. */
  controlTotals: ValidatedTotals;
  /** The files not proven in external account number order, sorted on disk before the join (order-proof.ts). */
  sorted: OrderProof['outOfOrder'];
  /** Frees the spooled errors (after the reports are written). */
  close(): void;
}

/** Extra checks of a locally valid account (validate --remote); resolves with the service's errors, located. */
export type RemoteCheck = (account: ExportAccount) => Promise<SourceIssue[]>;

const ORPHAN_SAMPLE = 20;

export interface ValidatedTotals {
  kinds: KindTotal[];
  sources: SourceFileUse[];
  controlCounts: ControlCount[];
  /** The rows that reached no record: how many, and the first few. */
  unused: { count: number; first: UnusedRow[] };
}

const UNUSED_SHOWN = 10;

export interface ValidateExportOptions {
  remote?: RemoteCheck;
  /** Most remote checks in flight at once (default 4). */
  remoteConcurrency?: number;
  onEntry?: (entry: ExportEntry) => void;
}

/** Validates an export read once, in account order (a proven streaming read, or the scratch join). */
export async function validateExport(
  reader: ExportReader & { proof?: OrderProof | undefined },
  options: ValidateExportOptions = {},
): Promise<ExportValidation> {
  const accountErrors = new IssueSpool();
  const fileErrors = new IssueSpool();
  const omitted = new IssueSpool();
  const warnings = new IssueSpool();
  const errors = concatIssues([fileErrors, accountErrors]);
  const result: ExportValidation = {
    ok: true,
    accounts: { total: 0, valid: 0, invalid: 0 },
    errors,
    fileErrors: 0,
    byCode: {},
    orphans: { accounts: 0, records: 0, numbers: [] },
    duplicateNotes: 0,
    beforeOpenPeriod: 0,
    omitted,
    warnings,
    nearKeys: [],
    summary: reader.summary,
    controlTotals: { kinds: [], sources: [], controlCounts: [], unused: { count: 0, first: [] } },
    sorted: reader.proof?.outOfOrder ?? [],
    close: () => {
      fileErrors.close();
      accountErrors.close();
      omitted.close();
      warnings.close();
    },
  };
  try {
    const tally = new ControlTally();
    await readEntries(reader, { ...options, onEntry: tallied(tally, options.onEntry) }, result, {
      errors: accountErrors,
      omitted,
      warnings,
    });
    result.controlTotals = await validatedTotals(reader, tally);
    // A streaming read knows its file issues only at the end; they come first in the report either way.
    for await (const issue of reader.fileIssues) fileErrors.push(issue);
  } catch (error) {
    result.close();
    throw error;
  }
  result.fileErrors = fileErrors.length;
  result.byCode = errors.byCode;
  result.ok = errors.length === 0;
  return result;
}

function tallied(tally: ControlTally, onEntry: ValidateExportOptions['onEntry']): (entry: ExportEntry) => void {
  return (entry) => {
    tally.take(entry);
    onEntry?.(entry);
  };
}

/** The control totals of an export read to its end: counted per kind, and the sources' rows (the engine's sets). */
async function validatedTotals(reader: ExportReader, tally: ControlTally): Promise<ValidatedTotals> {
  const use = await reader.sourceUse();
  const unused = { count: 0, first: [] as UnusedRow[] };
  for await (const rows of use.unused()) {
    unused.count += rows.length;
    unused.first.push(...rows.slice(0, UNUSED_SHOWN - unused.first.length));
  }
  return { kinds: tally.totals(), sources: use.files, controlCounts: use.controlCounts, unused };
}

async function readEntries(
  reader: ExportReader,
  options: ValidateExportOptions,
  result: ExportValidation,
  { errors, omitted, warnings }: { errors: IssueSpool; omitted: IssueSpool; warnings: IssueSpool },
): Promise<void> {
  const queue = new PQueue({ concurrency: options.remoteConcurrency ?? 4 });
  // A remote check that throws (authentication, service unreachable) stops the run: exit 3.
  const failure: { error?: unknown } = {};
  const pushAll = (issues: SourceIssue[]): void => issues.forEach((issue) => errors.push(issue));
  const near = new NearKeys();
  result.nearKeys = near.found;
  for await (const entry of reader.entries()) {
    options.onEntry?.(entry);
    result.duplicateNotes += (entry.kind === 'orphan' ? entry.items : entry.account).duplicateNotes ?? 0;
    const held = entry.kind === 'orphan' ? entry.items : entry.account;
    result.beforeOpenPeriod += held.beforeOpenPeriod ?? 0;
    for (const dropped of held.omitted ?? []) omitted.push(dropped);
    for (const warning of held.warnings ?? []) warnings.push(warning);
    if (entry.kind === 'orphan') {
      const items = [
        entry.items.notes,
        entry.items.transactions,
        entry.items.statements,
        entry.items.paymentInstructions,
      ].flat();
      result.orphans.accounts += 1;
      result.orphans.records += items.length;
      if (result.orphans.numbers.length < ORPHAN_SAMPLE) result.orphans.numbers.push(entry.items.externalAccountNumber);
      near.orphan(entry.items.externalAccountNumber, items[0]?.origin);
      for (const item of items) pushAll(item.issues);
      continue;
    }
    result.accounts.total += 1;
    const account = entry.account;
    near.account(account.externalAccountNumber, account.origin);
    if (account.issues.length > 0) {
      result.accounts.invalid += 1;
      pushAll(account.issues);
    } else if (options.remote) {
      // Back-pressure: never hold more than a few accounts waiting for the service.
      await queue.onSizeLessThan(queue.concurrency * 2);
      const check = options.remote;
      if (failure.error !== undefined) break;
      queue
        .add(async () => {
          const issues = await check(account);
          if (issues.length === 0) result.accounts.valid += 1;
          else {
            result.accounts.invalid += 1;
            pushAll(issues);
          }
        })
        .catch((error: unknown) => {
          failure.error ??= error;
          queue.clear();
        });
    } else {
      result.accounts.valid += 1;
    }
  }
  await queue.onIdle();
  if (failure.error !== undefined) throw failure.error as Error;
}
