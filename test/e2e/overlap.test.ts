import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writePushExport } from '../bench/push-export.js';
import { push } from './helpers.js';

// Sending while the export is read (README "Sending while the export is read"), end to end: the
// real binary against the sandbox, on a sorted export with every record kind (the benchmark's).

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'overlap-e2e-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ACCOUNTS = 1500;
async function exportOf(name: string, accounts: number): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir);
  await writePushExport(dir, accounts, 'full');
  return dir;
}

const number = (index: number): string => `PB-${String(index).padStart(8, '0')}`;

/** Rows per account in a file of the export (the first column is the account number). */
function rowsPerAccount(dir: string, file: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of readFileSync(join(dir, file), 'utf8').trim().split('\n').slice(1)) {
    const key = line.slice(0, line.indexOf(','));
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Every account of the export created once on the sandbox, with each of its records once. */
function expectExact(sandbox: RunningSandbox, dir: string): void {
  const notes = rowsPerAccount(dir, 'notes.csv');
  const transactions = rowsPerAccount(dir, 'transactions.csv');
  const statements = rowsPerAccount(dir, 'statements.csv');
  const instructions = rowsPerAccount(dir, 'payment_instructions.csv');
  const wrong: string[] = [];
  for (const key of rowsPerAccount(dir, 'accounts.csv').keys()) {
    const account = sandbox.inspect.account('ACME', key);
    const found = [
      account?.createRequestsAccepted,
      account?.notes.length,
      account?.transactions.length,
      account?.historicalStatements.length,
      account?.paymentInstructions.length,
    ];
    const expected = [1, notes.get(key) ?? 0, transactions.get(key) ?? 0, statements.get(key) ?? 0];
    expected.push(instructions.get(key) ?? 0);
    if (JSON.stringify(found) !== JSON.stringify(expected))
      wrong.push(`${key}: ${JSON.stringify(found)} != ${JSON.stringify(expected)}`);
  }
  expect(wrong.slice(0, 5)).toEqual([]);
}

describe('migrate push sends while it reads the export', () => {
  // A sandbox per test: the exports share account numbers.
  let sandbox: RunningSandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ processingMs: 50, latencyMs: 5, seed: 3 });
  });
  afterEach(async () => sandbox.close());

  it('sends the first accounts before the export is staged, and lands every record once', async () => {
    const dir = await exportOf('sorted', ACCOUNTS);
    const log = join(root, 'sorted.ndjson');
    const result = await push(sandbox, dir, join(root, 'sorted-state'), ['--concurrency', '16', '--log-file', log]);
    expect(result.code, result.stderr).toBe(0);
    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string });
    const staged = events.findIndex((event) => event.event === 'staged');
    const firstCreate = events.findIndex((event) => event.event === 'account');
    expect(firstCreate).toBeGreaterThan(-1);
    expect(firstCreate, 'an account was sent before the whole export was staged').toBeLessThan(staged);
    expect(result.stderr).not.toMatch(/out of external account number order/);
    expectExact(sandbox, dir);
  });

  it('a file found out of order part way: sending pauses, the export is read again sorted, late rows are sent or reported', async () => {
    const dir = await exportOf('late', ACCOUNTS);
    // Rows of early accounts at the end of their files: found only when the join reaches them.
    appendFileSync(join(dir, 'notes.csv'), `${number(3)},"A late note",2026-11-09T09:00:00Z\n`);
    appendFileSync(join(dir, 'customers.csv'), `${number(5)},Dr,Cy,Late,cy@example.org,,1970-01-01,false\n`);
    const state = join(root, 'late-state');
    const result = await push(sandbox, dir, state, ['--concurrency', '16', '--json']);
    expect(result.code, result.stderr).toBe(0);
    // Which of the two files the join finds out of order first depends on how far each has been read.
    expect(result.stderr).toMatch(/(notes|customers)\.csv:\d+ is out of external account number order: sending paused/);
    expectExact(sandbox, dir);
    expect(sandbox.inspect.account('ACME', number(3))?.notes.map((note) => note.body)).toContain('A late note');
    // The late customer: sent with its account if that was not sent yet, else reported, never dropped silently.
    const sent = JSON.stringify(sandbox.inspect.account('ACME', number(5))?.payload ?? {});
    const reader = openLedgerReader(state);
    const account = reader.read.accountsByNumber(number(5))[0];
    reader.close();
    if (!sent.includes('cy@example.org')) {
      expect(account?.changedFingerprint).not.toBeNull();
      expect(JSON.parse(result.stdout)).toMatchObject({ changedAfterImport: 1 });
    }
  });

  it('rows outside any account found while reading: every account is sent, the rows are named, exit 1', async () => {
    const dir = await exportOf('orphan-rows', 200);
    const customers = readFileSync(join(dir, 'customers.csv'), 'utf8');
    writeFileSync(
      join(dir, 'customers.csv'),
      customers.replace(
        `\n${number(100)},`,
        `\nPB-00000099X,Mr,No,Account,no@example.org,,1970-01-01,false\n${number(100)},`,
      ),
    );
    const result = await push(sandbox, dir, join(root, 'orphan-rows-state'), ['--concurrency', '8']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/1 problem\(s\) outside any account; those rows were not sent, every account was/);
    expect(result.stderr).toMatch(/customers\.csv:\d+/);
    expectExact(sandbox, dir);
  });

  it('SIGKILL while staging and sending overlap, then a rerun: every record exactly once', async () => {
    const dir = await exportOf('killed', 3000);
    const state = join(root, 'killed-state');
    const before = sandbox.inspect.requestCount();
    const killed = await push(sandbox, dir, state, ['--concurrency', '16'], {
      afterMs: 150,
      signal: 'SIGKILL',
      // From the first request: staging of 3,000 accounts is still going on then.
      when: () => sandbox.inspect.requestCount() > before + 20,
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const reader = openLedgerReader(state);
    const staged = reader.read.counts().accounts;
    reader.close();
    const inLedger = Object.values(staged).reduce((sum, n) => sum + n, 0);
    expect(inLedger, 'killed before the whole export was staged').toBeLessThan(3000);
    expect(inLedger).toBeGreaterThan(0);
    const rerun = await push(sandbox, dir, state, ['--concurrency', '16']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expectExact(sandbox, dir);
  });
});
