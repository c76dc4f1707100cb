import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { openLedgerReader } from '../../src/ledger/index.js';
import type { E2eExport } from './export.js';
import { exportInMemory, payloadDifferences } from './oracle.js';
import { afterOriginLine } from '../run-origin-line.js';

export const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

/**
 * The first day of the open statement period the sample export (fixtures/sample) is dated in: its transactions fall in
 * November 2026. A sandbox's own period starts on the first of the current month and refuses what is dated before it,
 * so a test that pushes the sample and expects all of it to land, whatever the month it runs in, gives its sandbox this
 * period: startSandbox's `openPeriodStart`, or SAMPLE_PERIOD_FLAGS for `push --sandbox` and `validate --remote
 * --sandbox` (the built-in sandbox takes the period the run declares).
 */
export const SAMPLE_OPEN_PERIOD = '2026-11-01';
export const SAMPLE_PERIOD_FLAGS = ['--open-period-start', SAMPLE_OPEN_PERIOD];

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `migrate push` as a child process; `kill` sends a signal after some milliseconds. */
export function push(
  sandbox: RunningSandbox,
  exportDir: string,
  stateDir: string,
  extra: string[] = [],
  kill?: { afterMs: number; signal: NodeJS.Signals; afterOutput?: RegExp; when?: () => boolean },
): Promise<RunResult> {
  const target = extra.includes('--sandbox') ? [] : ['--base-url', sandbox.url];
  // A PostgreSQL ledger (--ledger, MIGRATE_LEDGER_URL) is the run's ledger instead of the state directory: the two
  // together are refused.
  const postgres = extra.includes('--ledger') || (process.env['MIGRATE_LEDGER_URL'] ?? '') !== '';
  const ledger = postgres ? [] : ['--state', stateDir];
  const args = [BIN, 'push', exportDir, ...target, ...ledger, ...extra];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (kill && timer === undefined) timer = setTimeout(() => child.kill(kill.signal), kill.afterMs);
  };
  // With afterOutput, the delay counts from that output (e.g. staging done), not from spawning.
  // With `when`, the delay counts from the moment it holds (polled every 10 ms), e.g. the sandbox applied a request.
  const poll = kill?.when ? setInterval(() => kill.when?.() && arm(), 10) : undefined;
  if (kill?.afterOutput) child.stderr.on('data', () => kill.afterOutput?.test(stderr) && arm());
  else if (!kill?.when) arm();
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      // What push says after its first line (the run configuration and the service: run-origin-line.ts).
      resolve({ code, signal, stdout, stderr: afterOriginLine(stderr) });
    });
  });
}

/** POST requests the sandbox received, except the token mutation. */
export function writesReceived(sandbox: RunningSandbox): number {
  return sandbox.inspect.requests().filter((entry) => entry.method === 'POST' && !entry.path.includes('graphql'))
    .length;
}

/** The most REST requests (token mutation excluded: the client does not gate it) the sandbox had in flight at once. */
export function maxRestInFlight(sandbox: RunningSandbox): number {
  const edges = sandbox.inspect
    .requests()
    .filter((entry) => !entry.path.includes('graphql'))
    .flatMap(
      (entry) =>
        [
          [entry.startedAt, 1],
          [entry.endedAt, -1],
        ] as Array<[number, number]>,
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let max = 0;
  for (const [, step] of edges) {
    current += step;
    max = Math.max(max, current);
  }
  return max;
}

/** Item states by kind for one account, from the ledger (read-only, no lock). */
export function ledgerItems(
  stateDir: string,
  supplier: string,
  number: string,
): Array<{ kind: string; key: string; state: string }> {
  const reader = openLedgerReader(stateDir);
  try {
    const account = reader.read.account(supplier, number);
    if (account === undefined) return [];
    return reader.read.items(account.id).map((item) => ({ kind: item.kind, key: item.naturalKey, state: item.state }));
  } finally {
    reader.close();
  }
}

export function ledgerAccountState(stateDir: string, supplier: string, number: string): string | undefined {
  const reader = openLedgerReader(stateDir);
  try {
    return reader.read.account(supplier, number)?.state;
  } finally {
    reader.close();
  }
}

/**
 * The sandbox's final state is exactly the export's valid data: every account created with exactly the payload mapped
 * from the whole export read in memory (test/e2e/oracle.ts), every valid account created
 * once and PROCESSED with exactly its notes, transactions and statements; each payment
 * instruction created once and `done` in the ledger (a lost answer is settled by a resend and
 * the one-active-instruction rule, never left `unknown`); invalid accounts never sent; ERR-
 * accounts ERRORED after one create.
 */
export async function expectExactState(
  sandbox: RunningSandbox,
  data: E2eExport,
  stateDir: string,
  expect: (value: unknown, message?: string) => any,
): Promise<void> {
  // The accounts of this export (a sandbox may hold other tests' exports too).
  const ours = new Set([...data.valid, ...data.invalid, ...data.errored]);
  const created = sandbox.inspect
    .accounts('ACME')
    .filter((account) => ours.has(account.externalAccountNumber))
    .map((account) => ({ number: account.externalAccountNumber, payload: account.payload }));
  const wrong = payloadDifferences(created, await exportInMemory(data.dir, { MIGRATE_SUPPLIER: 'ACME' }));
  expect(wrong.slice(0, 5), `${wrong.length} accounts created with another payload than the export's`).toEqual([]);
  for (const number of data.valid) {
    const account = sandbox.inspect.account('ACME', number);
    expect(account?.createRequestsAccepted, `${number} creates`).toBe(1);
    expect(account?.status, number).toBe('PROCESSED');
    expect(
      account?.notes
        .filter((note) => !note.bySandbox)
        .map((note) => note.body)
        .sort(),
      `${number} notes`,
    ).toEqual([...(data.notes.get(number) ?? [])].sort());
    expect(account?.transactions.map((t) => t.transactionId).sort(), `${number} transactions`).toEqual(
      [...(data.transactions.get(number) ?? [])].sort(),
    );
    expect(account?.historicalStatements.map((s) => s['statement_id']).sort(), `${number} statements`).toEqual(
      [...(data.statements.get(number) ?? [])].sort(),
    );
    // 40.10 in the export, an integer in minor units on the service.
    for (const statement of account?.historicalStatements ?? []) expect(statement['gross_amount']).toBe(4010);
    if (data.meterPoints.size > 0) {
      const addresses = (account?.payload as { supply_addresses?: Array<Record<string, unknown>> } | undefined)
        ?.supply_addresses;
      expect(addresses?.[0]?.['meter_points'], `${number} meter points`).toEqual(data.meterPoints.get(number));
    }
    const reference = data.paymentInstructions.get(number);
    const created = account?.paymentInstructions.map((pi) => pi.reference) ?? [];
    if (reference === undefined) {
      expect(created, `${number} payment instructions`).toEqual([]);
    } else {
      const state = ledgerItems(stateDir, 'ACME', number).find((item) => item.kind === 'payment_instruction')?.state;
      expect(created, `${number} payment instruction (${state})`).toEqual([reference]);
      expect(state, `${number} payment instruction in the ledger`).toBe('done');
    }
  }
  for (const number of data.failingPaymentInstructions)
    expect(sandbox.inspect.account('ACME', number)?.paymentInstructions, number).toEqual([]);
  for (const number of data.invalid)
    expect(sandbox.inspect.account('ACME', number), `${number} never sent`).toBeUndefined();
  for (const number of data.errored) {
    const account = sandbox.inspect.account('ACME', number);
    expect(account?.status, number).toBe('ERRORED');
    expect(account?.createRequestsAccepted, `${number} creates`).toBe(1);
    expect(account?.notes, `${number} notes`).toEqual([]);
    expect(ledgerAccountState(stateDir, 'ACME', number), `${number} in the ledger`).toBe('errored');
  }
}
