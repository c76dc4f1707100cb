import { parse } from 'csv-parse/sync';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { copyLegacyCis, FILES, LEGACY_CIS, readLegacyCis, sendHistoryAsTransactions } from './legacy-cis-files.js';
import { runMigrate } from './run-push.js';

// History where the platform keeps it (docs/from-a-legacy-system.md "History in ledgers"), through the real binary
// against the sandbox with a known open statement period: the legacy CIS fixture's history in its accounts' ledgers
// lands with nothing re-dated; the same history sent through the transactions endpoint is named by validate when the
// period is given, refused (and named) by push without forcing, and moved into the period (and counted) with it.

const SUPPLIER = 'THISTLE';
const OPEN_PERIOD_START = '2026-11-01';
const TODAY = '2026-11-27';

/** The live accounts' postings dated before the open period, read from the legacy file: `file:line` each. */
function postingsBeforeThePeriod(): string[] {
  const live = new Set([...readLegacyCis()].filter(([, account]) => account.status === 'LIVE').map(([key]) => key));
  const rows = parse(readFileSync(join(LEGACY_CIS, FILES.postings)), { columns: true, delimiter: '|' }) as Array<
    Record<string, string>
  >;
  return rows.flatMap((row, index) => {
    const date = row['POST_DATE']!.split('/').reverse().join('-');
    return live.has(row['ACCT_NO']!) && date < OPEN_PERIOD_START ? [`${FILES.postings}:${index + 2}`] : [];
  });
}

let root: string;
let before: string[];
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'open-period-'));
  before = postingsBeforeThePeriod();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function withSandbox<T>(run: (sandbox: RunningSandbox) => Promise<T>): Promise<T> {
  const sandbox = await startSandbox({
    suppliers: { [SUPPLIER]: 'Ongoing' },
    processingMs: 0,
    openPeriodStart: OPEN_PERIOD_START,
    today: TODAY,
  });
  try {
    return await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

describe('the open statement period', () => {
  it('has postings before it in the fixture (the history the tests are about)', () => {
    expect(before.length).toBeGreaterThan(100);
  });

  it('history in the ledgers lands with nothing re-dated: no transaction through the endpoint, no note pinned', async () => {
    const dir = copyLegacyCis(join(root, 'ledgers'));
    await withSandbox(async (sandbox) => {
      const result = await push(sandbox, dir, join(root, 'ledgers-state'));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).not.toContain('open statement period');
      const accounts = sandbox.inspect.accounts(SUPPLIER);
      expect(accounts).toHaveLength(200);
      const dates: string[] = [];
      for (const account of accounts) {
        expect(account.transactions, account.externalAccountNumber).toEqual([]);
        expect(
          account.notes.filter((note) => note.bySandbox),
          account.externalAccountNumber,
        ).toEqual([]);
        const ledgers = (account.payload as { ledgers: Array<Record<string, Array<{ transaction_date: string }>>> })
          .ledgers;
        for (const ledger of ledgers)
          for (const list of ['historical_statement_transactions', 'current_statement_transactions'])
            dates.push(...(ledger[list] ?? []).map((transaction) => transaction.transaction_date));
      }
      // The history keeps its dates, those before the open period among them.
      expect(dates.filter((date) => date < OPEN_PERIOD_START).length).toBeGreaterThanOrEqual(before.length);
    });
  });

  it('validate, told the period, names every transaction dated before it at its legacy line (exit 5)', async () => {
    const dir = copyLegacyCis(join(root, 'validate'));
    sendHistoryAsTransactions(dir);
    const result = await runMigrate(['validate', dir, '--open-period-start', OPEN_PERIOD_START, '--json']);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as {
      errors: Array<{ file: string; line: number; code: string; attr: string }>;
    };
    const named = report.errors
      .filter((error) => error.code === 'transaction_outside_open_period')
      .map((error) => `${error.file}:${error.line}`);
    expect(named.sort()).toEqual([...before].sort());
    // Without the period it does not know it: nothing is named.
    const blind = await runMigrate(['validate', dir]);
    expect(blind.code, blind.stderr).toBe(0);
  });

  it('validate warns with the count where forcing is declared', async () => {
    const dir = copyLegacyCis(join(root, 'validate-forced'));
    sendHistoryAsTransactions(dir, true);
    const result = await runMigrate(['validate', dir, '--open-period-start', OPEN_PERIOD_START]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `Warning: ${before.length} transaction(s) dated before the open statement period (from ${OPEN_PERIOD_START}): ` +
        'force_add_to_current_statement is declared',
    );
  });

  it('push without forcing: the service refuses each, push records its words and names the period; so does status', async () => {
    const dir = copyLegacyCis(join(root, 'refused'));
    sendHistoryAsTransactions(dir);
    const state = join(root, 'refused-state');
    await withSandbox(async (sandbox) => {
      const result = await push(sandbox, dir, state);
      expect(result.code, result.stderr).toBe(5);
      const line =
        `${before.length} transactions refused as dated outside the open statement period ` +
        `(${OPEN_PERIOD_START} to ${TODAY})`;
      expect(result.stdout).toContain(line);
      const held = sandbox.inspect.accounts(SUPPLIER).flatMap((account) => account.transactions);
      expect(held.filter((transaction) => transaction.submittedDate < OPEN_PERIOD_START)).toEqual([]);
      expect(held.filter((transaction) => transaction.movedIntoOpenPeriod)).toEqual([]);

      const status = await runMigrate(['status', SUPPLIER, '--base-url', sandbox.url, '--state', state], {
        MIGRATE_API_KEY: sandbox.apiKey,
        NO_COLOR: '1',
      });
      expect(status.stdout, status.stderr).toContain(line);

      const out = join(root, 'refused-report');
      const report = await runMigrate(['report', '--state', state, '--out', out]);
      expect(report.code, report.stderr).toBe(0);
      const rows = parse(readFileSync(join(out, 'fix-data.csv')), { columns: true, bom: true }) as Array<
        Record<string, string>
      >;
      const refused = rows.filter((row) => row['code'] === 'transaction_outside_open_period');
      expect(refused.map((row) => `${row['file']}:${row['line']}`).sort()).toEqual([...before].sort());
      expect(refused[0]?.['message']).toMatch(/not within the statement .* period/);
    });
  });

  it('push with forcing declared: the service moves each into the period; push counts them, and the notes pinned', async () => {
    const dir = copyLegacyCis(join(root, 'forced'));
    sendHistoryAsTransactions(dir, true);
    await withSandbox(async (sandbox) => {
      const result = await push(sandbox, dir, join(root, 'forced-state'));
      expect(result.code, result.stderr).toBe(0);
      const accounts = sandbox.inspect.accounts(SUPPLIER);
      const moved = accounts.flatMap((account) => account.transactions).filter((t) => t.movedIntoOpenPeriod);
      expect(moved).toHaveLength(before.length);
      expect(moved.every((transaction) => transaction.transactionDate === OPEN_PERIOD_START)).toBe(true);
      const pinned = accounts.filter((account) => account.notes.some((note) => note.bySandbox && note.isPinned));
      expect(result.stdout).toContain(
        `${before.length} transactions moved into the open statement period (from ${OPEN_PERIOD_START}) by the ` +
          `service (force_add_to_current_statement): their dates changed, a note pinned to each of ` +
          `${pinned.length} accounts`,
      );
    });
  });

  it("push --sandbox rehearses with the open period the run declares: the sample's November transactions in December", async () => {
    // A clock in December (the sandbox's own period would start on 1 December and refuse all of them).
    const clock = pathToFileURL(join(import.meta.dirname, '..', 'docs', 'sample-month-clock.mjs')).href;
    const env = { SAMPLE_MONTH_NOW: '2026-12-10T12:00:00Z', NODE_OPTIONS: `--import ${clock}` };
    const sample = join(import.meta.dirname, '..', '..', 'fixtures', 'sample');
    const own = await runMigrate(['push', sample, '--sandbox', '--state', join(root, 'december-own'), '--json'], env);
    const refused = JSON.parse(own.stdout) as { items: Record<string, Record<string, number>> };
    expect(refused.items['transaction']?.['failed'], own.stderr).toBe(80);
    const declared = await runMigrate(
      ['push', sample, '--sandbox', '--open-period-start', '2026-11-01', '--state', join(root, 'december'), '--json'],
      env,
    );
    expect(declared.code, declared.stderr).toBe(0);
    const landed = JSON.parse(declared.stdout) as { items: Record<string, Record<string, number>> };
    expect(landed.items['transaction']).toEqual({ done: 80 });
  });
});
