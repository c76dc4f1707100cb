import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunRow } from '../../src/ledger/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { startSandboxProcess, type SandboxAccount } from '../soak/sandbox-child.js';
import { counts, cronHost, pushRuns, pushUntilDone } from './cron-host.js';
import { writeE2eExport, type E2eExport } from './export.js';
import { expectExactState } from './helpers.js';
import { exportInMemory, payloadDifferences, type ExpectedExport } from './oracle.js';

// A cut-over that runs itself for several nights (docs/operators-guide.md section 3): the guide's crontab on a host
// under `dir` (test/e2e/cron-host.ts), with `migrate` (shell words) standing for the installed command, back to back,
// with no wait between runs: the sandbox's processing is settled by its control API, or short.

/**
 * The first night creates everything; nothing needs a person, so nobody is mailed (exit 1); once the service has
 * processed the accounts, the next push finishes the migration (exit 0). Every line of the push job's output (cron's
 * output file) carries the time and its run's id.
 */
export async function nightsUntilProcessed(dir: string, migrate: string): Promise<void> {
  // Processing far longer than any run: nothing is imported until the control API settles it.
  const sandbox = await startSandbox({ processingMs: 600_000 });
  try {
    const data = writeE2eExport(dir, 30, 'CRON', 'spec', { clean: true, dir: join('exports', 'cohort-1') });
    const cron = cronHost(dir, sandbox.url, sandbox.apiKey, migrate);
    // First night: every account created and waiting for processing; not finished, nothing for a person: exit 1.
    expect(await cron.push()).toBe(1);
    expect(counts(cron.state)).toEqual({ scheduled: 30 });
    // The status job: exit 1 (not finished), and nobody is mailed.
    expect(await cron.status()).toBe(1);
    expect(cron.mails()).toEqual([]);
    // The service processes them; the next run takes them up although it does not wait for anything.
    sandbox.control.settleAll();
    expect(await cron.push()).toBe(0);
    await expectExactState(sandbox, data, cron.state, expect);
    expect(await cron.status()).toBe(0);
    expect(cron.mails()).toEqual([]);
    const closed = cron
      .log('cohort-1.ndjson')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; exit_code?: number })
      .filter((event) => event.event === 'log_closed');
    expect(closed.map((event) => event.exit_code)).toEqual([1, 0]);
    expect(cron.log('cohort-1.out')).toContain("push finished this run's work, not the migration: 30 accounts");
    expect(cron.log('cohort-1.out')).toContain('push finished: everything done');
    const runs = pushRuns(cron.state);
    expect(runs).toHaveLength(2);
    expectStampedOutput(cron.log('cohort-1.out'), runs);
  } finally {
    await sandbox.close();
  }
}

/**
 * Accounts with data to fix: the pushes land everything else and exit 5, mailing nobody every 20 minutes; the morning
 * status job exits 5 and mails the lead, its subject the first next step.
 */
export async function mailsWhenAPersonMustAct(dir: string, migrate: string): Promise<void> {
  const sandbox = await startSandbox({ processingMs: 5 });
  try {
    const data = writeE2eExport(dir, 20, 'DATA', 'spec', { dir: join('exports', 'cohort-1') });
    expect(data.invalid.length).toBeGreaterThan(0);
    const cron = cronHost(dir, sandbox.url, sandbox.apiKey, migrate);
    const codes = [await cron.push(), await cron.push(), await cron.push()];
    expect(codes.at(-1)).toBe(5);
    expect(cron.mails()).toEqual([]);
    expect(await cron.status()).toBe(5);
    expect(cron.mails()).toHaveLength(1);
    expect(cron.mails()[0]).toMatch(/^Subject: ACME migration \(status exit 5\): next: \d+ accounts? /);
  } finally {
    await sandbox.close();
  }
}

/**
 * Against the sandbox in its own process (processing 0.3-0.9 s), 200 accounts with every record kind land within 5
 * back-to-back runs, status exits 0 without a mail, and every line of the runs' output carries the time and its run's id.
 */
export async function convergesWithinFiveRuns(dir: string, migrate: string): Promise<void> {
  const sandbox = await startSandboxProcess({ processingMs: 300, processingSpreadMs: 600, seed: 5 });
  try {
    const data = writeE2eExport(dir, 200, 'OWN', 'spec', { clean: true, dir: join('exports', 'cohort-1') });
    const cron = cronHost(dir, sandbox.url, sandbox.apiKey, migrate);
    const codes = await pushUntilDone(cron, 5);
    expect(codes.at(-1), `exit codes of the runs: ${codes.join(', ')}`).toBe(0);
    expect(counts(cron.state)).toEqual({ done: 200 });
    expect(await cron.status()).toBe(0);
    expect(cron.mails()).toEqual([]);
    const expected = await exportInMemory(data.dir, { MIGRATE_SUPPLIER: 'ACME' });
    expect(differences(data, await sandbox.dump(), expected)).toEqual([]);
    const runs = pushRuns(cron.state);
    expect(runs.map((run) => run.exitCode)).toEqual(codes);
    expectStampedOutput(cron.log('cohort-1.out'), runs);
  } finally {
    await sandbox.close();
  }
}

const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) run (\d+|-) /;

/**
 * Cron mail with time: every line of the runs' output, appended to one file, starts with the time and its run's id
 * (`run -` before the ledger has given the id), and the ids are the ledger's push runs, each run's lines together,
 * in the order the runs ran. (An empty line, between a summary's sections, stays empty.)
 */
function expectStampedOutput(output: string, runs: RunRow[]): void {
  const lines = output.split('\n').filter((line) => line !== '');
  expect(lines.filter((line) => !STAMP.test(line)).slice(0, 5), 'lines without a time and a run id').toEqual([]);
  const stamps = lines.map((line) => STAMP.exec(line) ?? []);
  // Real times of day; their order is not asked, as the wall clock may step back between two lines.
  for (const stamp of stamps) expect(Number.isNaN(Date.parse(stamp[1] ?? '')), stamp[1]).toBe(false);
  const ids = stamps.map((stamp) => stamp[2] ?? '-').filter((id) => id !== '-');
  const byRun = ids.filter((id, index) => id !== ids[index - 1]);
  expect(byRun, 'the run ids of the lines, in the order written').toEqual(runs.map((run) => String(run.id)));
}

/** Where the sandbox's accounts differ from the export: every account created once, exactly, PROCESSED, with its records. */
function differences(data: E2eExport, accounts: SandboxAccount[], expected: ExpectedExport): string[] {
  const byNumber = new Map(accounts.map((account) => [account.number, account]));
  const sorted = (list: readonly string[] | undefined): string => JSON.stringify([...(list ?? [])].sort());
  // Every account created exactly as mapped from the whole export (customers, supply addresses, every field).
  const problems = payloadDifferences(accounts, expected);
  for (const number of data.valid) {
    const account = byNumber.get(number);
    const expected: Array<[string, string, string]> = [
      ['status', account?.status ?? 'absent', 'PROCESSED'],
      ['creates', String(account?.creates), '1'],
      ['notes', sorted(account?.notes), sorted(data.notes.get(number))],
      ['transactions', sorted(account?.transactions), sorted(data.transactions.get(number))],
      ['statements', sorted(account?.statements), sorted(data.statements.get(number))],
      [
        'payment instructions',
        sorted(account?.paymentInstructions),
        sorted([data.paymentInstructions.get(number)].filter((reference) => reference !== undefined)),
      ],
    ];
    for (const [what, got, want] of expected) if (got !== want) problems.push(`${number} ${what}: ${got}, not ${want}`);
  }
  return problems;
}
