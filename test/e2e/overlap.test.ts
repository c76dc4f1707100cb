import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parse } from 'csv-parse/sync';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { PUSH_EXPORT_OPEN_PERIOD, writePushExport, type ExportOrder } from '../bench/push-export.js';
import { expectServiceHoldsExport } from './expect-export.js';
import { exportInMemory } from './oracle.js';
import { push } from './helpers.js';

// Complete or not at all (docs/complete-or-not.md), end to end: the real binary against the
// sandbox, on the benchmark's exports with every record kind, scattered as legacy exports are or
// sorted. Each test compares what the sandbox holds, account by account and whole payload by whole
// payload, with the export read whole in memory.

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'overlap-e2e-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ACCOUNTS = 1500;
async function exportOf(name: string, accounts: number, order: ExportOrder = 'scattered'): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir);
  await writePushExport(dir, accounts, order);
  return dir;
}

const number = (index: number): string => `PB-${String(index).padStart(8, '0')}`;

/** The sandbox holds exactly what the export read whole in memory maps to (test/e2e/oracle.ts). */
async function expectExact(sandbox: RunningSandbox, dir: string): Promise<void> {
  expectServiceHoldsExport(sandbox.inspect.accounts('ACME'), await exportInMemory(dir));
}

/** Rewrites an export's CSV file as JSON (an array) or NDJSON, every cell a string, in the same row order. */
function asJson(dir: string, base: string, format: 'json' | 'ndjson'): void {
  const csv = join(dir, `${base}.csv`);
  const rows = parse(readFileSync(csv, 'utf8'), { columns: true }) as Array<Record<string, string>>;
  const objects = rows.map((row) => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== '')));
  const text =
    format === 'json' ? JSON.stringify(objects, null, 1) : objects.map((row) => JSON.stringify(row)).join('\n');
  writeFileSync(join(dir, `${base}.${format}`), `${text}\n`);
  rmSync(csv);
}

/** The NDJSON log's events, in order. */
function eventsOf(log: string): Array<{ event: string; files?: string }> {
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { event: string; files?: string });
}

describe('migrate push: every account complete, on sorted and scattered exports', () => {
  // A sandbox per test: the exports share account numbers.
  let sandbox: RunningSandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ processingMs: 50, latencyMs: 5, seed: 3, openPeriodStart: PUSH_EXPORT_OPEN_PERIOD });
  });
  afterEach(async () => sandbox.close());

  it('a sorted export: its order is proven, the first accounts are sent before the export is staged, every payload exact', async () => {
    const dir = await exportOf('sorted', ACCOUNTS, 'sorted');
    const log = join(root, 'sorted.ndjson');
    const result = await push(sandbox, dir, join(root, 'sorted-state'), ['--concurrency', '16', '--log-file', log]);
    expect(result.code, result.stderr).toBe(0);
    const events = eventsOf(log);
    const staged = events.findIndex((event) => event.event === 'staged');
    const firstCreate = events.findIndex((event) => event.event === 'account');
    expect(firstCreate).toBeGreaterThan(-1);
    expect(firstCreate, 'an account was sent before the whole export was staged').toBeLessThan(staged);
    expect(events.some((event) => event.event === 'sorting')).toBe(false);
    await expectExact(sandbox, dir);
  });

  it('a scattered export (every file in its own order): sorted on disk before the first request, every payload exact', async () => {
    const dir = await exportOf('scattered', ACCOUNTS);
    const log = join(root, 'scattered.ndjson');
    const result = await push(sandbox, dir, join(root, 'scattered-state'), ['--concurrency', '16', '--log-file', log]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^migrate: sorting accounts\.csv \(out of order at line \d+\), customers\.csv/m);
    const events = eventsOf(log);
    const sorting = events.findIndex((event) => event.event === 'sorting');
    expect(sorting).toBeGreaterThan(-1);
    expect(sorting).toBeLessThan(events.findIndex((event) => event.event === 'account'));
    await expectExact(sandbox, dir);
  });

  it('a file out of order only at its last row: the proof finds it before anything is sent; late rows go with their account', async () => {
    const dir = await exportOf('late', ACCOUNTS, 'sorted');
    // Rows of early accounts at the end of their files: a join that trusted the first rows would send without them.
    appendFileSync(join(dir, 'notes.csv'), `${number(3)},"A late note",2026-11-09T09:00:00Z\n`);
    appendFileSync(join(dir, 'customers.csv'), `${number(5)},Dr,Cy,Late,cy@example.org,,1970-01-01,false\n`);
    const result = await push(sandbox, dir, join(root, 'late-state'), ['--concurrency', '16', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/sorting customers\.csv \(out of order at line \d+\), notes\.csv \(out of order/);
    await expectExact(sandbox, dir);
    expect(sandbox.inspect.account('ACME', number(3))?.notes.map((note) => note.body)).toContain('A late note');
    expect(JSON.stringify(sandbox.inspect.account('ACME', number(5))?.payload)).toContain('cy@example.org');
    expect(JSON.parse(result.stdout)).toMatchObject({ changed_after_import: 0 });
  });

  it('a scattered export mixing CSV, JSON and NDJSON files: every payload exact', async () => {
    const dir = await exportOf('mixed', 600);
    asJson(dir, 'customers', 'json');
    asJson(dir, 'notes', 'ndjson');
    asJson(dir, 'statements', 'json');
    // Read whole into the scratch join before the first account is handed out (their keys are known record by record).
    const result = await push(sandbox, dir, join(root, 'mixed-state'), ['--concurrency', '16']);
    expect(result.code, result.stderr).toBe(0);
    await expectExact(sandbox, dir);
  });

  it('rows outside any account found while reading: every account is sent, the rows are named, exit 5', async () => {
    const dir = await exportOf('orphan-rows', 200, 'sorted');
    const customers = readFileSync(join(dir, 'customers.csv'), 'utf8');
    writeFileSync(
      join(dir, 'customers.csv'),
      customers.replace(
        `\n${number(100)},`,
        `\nPB-00000099X,Mr,No,Account,no@example.org,,1970-01-01,false\n${number(100)},`,
      ),
    );
    const result = await push(sandbox, dir, join(root, 'orphan-rows-state'), ['--concurrency', '8']);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(/1 problem\(s\) outside any account; those rows were not sent, every account was/);
    expect(result.stderr).toMatch(/customers\.csv:\d+/);
    await expectExact(sandbox, dir);
  });

  it('SIGKILL while the scattered files are being sorted, then a rerun: nothing sent before, every payload exact', async () => {
    const dir = await exportOf('killed-sorting', 3000);
    const state = join(root, 'killed-sorting-state');
    const killed = await push(sandbox, dir, state, ['--concurrency', '16'], {
      afterMs: 0,
      signal: 'SIGKILL',
      afterOutput: /migrate: sorting /,
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const rerun = await push(sandbox, dir, state, ['--concurrency', '16']);
    expect(rerun.code, rerun.stderr).toBe(0);
    await expectExact(sandbox, dir);
  });

  it('SIGKILL while staging and sending overlap, then a rerun: every record exactly once', async () => {
    const dir = await exportOf('killed', 3000, 'sorted');
    const state = join(root, 'killed-state');
    const before = sandbox.inspect.requestCount();
    const killed = await push(sandbox, dir, state, ['--concurrency', '16'], {
      afterMs: 0,
      signal: 'SIGKILL',
      // Once 20 requests are made: staging of 3,000 accounts is still going on then (it stays a bounded number of
      // accounts ahead of the sending).
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
    await expectExact(sandbox, dir);
  });
});
