import type { LedgerCounts, LedgerReader } from '../../ledger/index.js';

// What a push leaves undone, from the ledger's counts: each part names how many, what, and the
// `migrate report` file that lists them, so a run that is not all done never ends with a plain
// "done" (README "Exit codes"). Pure: tested in test/engine/report.test.ts.

export interface LeftOver {
  count: number;
  /** What is left, in words, with its count ("3 accounts need data fixes"). */
  text: string;
  /** The `migrate report` file that lists them, or undefined when a rerun is all it takes. */
  file: 'fix-data.csv' | 'unknown-outcome.csv' | 'retry.csv' | undefined;
  /** What waits for them and what to do, said in brackets with the file ("6 records wait for them; check them"). */
  aside?: string;
}

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

function sumItems(counts: LedgerCounts, states: ReadonlyArray<'failed' | 'held' | 'unknown' | 'sending' | 'pending'>) {
  let total = 0;
  for (const byState of Object.values(counts.items)) for (const state of states) total += byState[state] ?? 0;
  return total;
}

/** Records waiting to be sent whose account a person must act on first: they wait for those accounts. */
export interface RecordsBehind {
  invalid: number;
  errored: number;
}

const NONE_BEHIND: RecordsBehind = { invalid: 0, errored: 0 };

/** `12 records wait for them`, in the words `status` uses; undefined when none wait. */
function waitingFor(records: number): string | undefined {
  if (records === 0) return undefined;
  return records === 1 ? '1 record waits for them' : `${records} records wait for them`;
}

/** `a; b` of the parts given, undefined when none is. */
function aside(...parts: Array<string | undefined>): string | undefined {
  const given = parts.filter((part) => part !== undefined);
  return given.length === 0 ? undefined : given.join('; ');
}

/**
 * Everything not done in the ledger, most urgent first; empty when every account is done with all its records.
 * Records behind invalid or ERRORED accounts are said with those accounts (they wait for them), not as records a later
 * run sends.
 */
export function leftOverOf(counts: LedgerCounts, behind: RecordsBehind = NONE_BEHIND): LeftOver[] {
  const accounts = counts.accounts;
  const parts: LeftOver[] = [];
  const add = (count: number, text: string, file: LeftOver['file'], more?: string): void => {
    if (count > 0) parts.push({ count, text, file, ...(more === undefined ? {} : { aside: more }) });
  };
  add(
    accounts.invalid ?? 0,
    plural(accounts.invalid ?? 0, 'account needs data fixes', 'accounts need data fixes'),
    'fix-data.csv',
    aside(waitingFor(behind.invalid)),
  );
  add(
    accounts.errored ?? 0,
    plural(accounts.errored ?? 0, 'account ERRORED on the platform', 'accounts ERRORED on the platform'),
    'fix-data.csv',
    aside(
      waitingFor(behind.errored),
      `check ${accounts.errored === 1 ? 'it' : 'them'}, then push with --retry-errored`,
    ),
  );
  const refused = sumItems(counts, ['failed', 'held']);
  add(refused, plural(refused, 'record refused or invalid', 'records refused or invalid'), 'fix-data.csv');
  const unknown = sumItems(counts, ['unknown']);
  add(
    unknown,
    plural(unknown, 'record of unknown outcome to check by hand', 'records of unknown outcome to check by hand'),
    'unknown-outcome.csv',
  );
  const unsettled = (accounts.creating ?? 0) + (accounts.unresolved ?? 0) + sumItems(counts, ['sending']);
  add(unsettled, plural(unsettled, 'create or record to settle', 'creates or records to settle'), 'retry.csv');
  const waiting = (accounts.scheduled ?? 0) + (accounts.processed ?? 0);
  add(
    waiting,
    plural(waiting, 'account waits for processing or its records', 'accounts wait for processing or their records'),
    'retry.csv',
  );
  add(accounts.staged ?? 0, plural(accounts.staged ?? 0, 'account not sent yet', 'accounts not sent yet'), undefined);
  const pending = Math.max(0, sumItems(counts, ['pending']) - behind.invalid - behind.errored);
  add(
    pending,
    plural(
      pending,
      'record not sent yet (its account is not imported yet, or a later run sends it)',
      'records not sent yet (their account is not imported yet, or a later run sends them)',
    ),
    undefined,
  );
  return parts;
}

/** One line: "3 accounts need data fixes (fix-data.csv), 1 record of unknown outcome ... (unknown-outcome.csv)". */
export function leftOverLine(parts: readonly LeftOver[]): string {
  return parts
    .map((part) => {
      const brackets = [part.aside, part.file].filter((text) => text !== undefined);
      return brackets.length === 0 ? part.text : `${part.text} (${brackets.join('; ')})`;
    })
    .join('; ');
}

/** Records waiting for accounts a person must act on first (invalid, ERRORED), as `status` counts them. */
export function recordsBehind(read: Pick<LedgerReader, 'waitingItems'>): RecordsBehind {
  const total = (counts: Partial<Record<string, number>>): number =>
    Object.values(counts).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  return { invalid: total(read.waitingItems(['invalid'])), errored: total(read.waitingItems(['errored'])) };
}
