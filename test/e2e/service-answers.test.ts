import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { SAMPLE_OPEN_PERIOD } from './helpers.js';
import { runMigrate, runPush } from './run-push.js';

// What a push makes of answers that are not the service's, through the real binary against a misbehaving sandbox.

let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'service-answers-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function ledgerCounts(state: string): { accounts: Record<string, number>; issues: number } {
  const reader = openLedgerReader(state);
  const db = new Database(join(state, 'ledger.sqlite'), { readonly: true });
  try {
    const issues = (db.prepare('SELECT count(*) AS n FROM account_issues').get() as { n: number }).n;
    return { accounts: reader.read.counts().accounts, issues };
  } finally {
    db.close();
    reader.close();
  }
}

describe("an HTML login page in the service's place", () => {
  it('stops the run (exit 3) naming the URL and the content type; no account is ERRORED or invalid; the rerun lands all', async () => {
    sandbox = await startSandbox({ processingMs: 0, htmlRate: 1, openPeriodStart: SAMPLE_OPEN_PERIOD });
    const state = join(root, 'sso');
    const env = { MIGRATE_API_KEY: sandbox.apiKey };
    const run = await runPush(sandbox.url, state, env, ['--concurrency', '2']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(
      `migrate: html_answer: createAccount: ${sandbox.url}/v2/data-import/accounts/ answered HTTP 200 with an HTML ` +
        `page (Content-Type: text/html; charset=utf-8; title "Sign in - Example Corp single sign-on")`,
    );
    expect(run.stdout).not.toMatch(/ERRORED|errored/);
    const counts = ledgerCounts(state);
    expect(counts.accounts).not.toHaveProperty('errored');
    expect(counts.accounts).not.toHaveProperty('invalid');
    expect(counts.accounts).not.toHaveProperty('creating');
    expect(counts.issues).toBe(0);
    const report = await runMigrate(['report', '--state', state, '--out', join(root, 'sso-report')]);
    expect(report.code, report.stderr).toBe(0);
    expect(
      readFileSync(join(root, 'sso-report', 'fix-data.csv'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(1);

    sandbox.control.setFaults({ htmlRate: 0 });
    const rerun = await runPush(sandbox.url, state, env, ['--concurrency', '2']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(sandbox.inspect.accountCount()).toBe(50);
  });
});

describe('a service that sends megabytes in one error', () => {
  it('the ledger, the NDJSON log, the reports and the output keep 2,000 characters of a detail and say how long it was', async () => {
    // Within the 1 MiB a status answer may hold (a 10 MiB one is refused whole: docs/limits.md).
    const chars = 1_000_000;
    sandbox = await startSandbox({ processingMs: 0, errorDetailChars: chars });
    const data = writeE2eExport(join(root, 'big'), 20, 'BIG', 'spec');
    const state = join(root, 'big-state');
    const log = join(root, 'big.ndjson');
    const env = { MIGRATE_API_KEY: sandbox.apiKey };
    const run = await runMigrate(
      ['push', data.dir, '--base-url', sandbox.url, '--state', state, '--log-file', log, '--concurrency', '4'],
      env,
    );
    expect(run.code, run.stderr.slice(0, 3000)).toBe(5);
    expect(data.errored.length).toBeGreaterThan(0);
    const stated = `... (${chars.toLocaleString('en-GB')} characters in all)`;
    const reader = openLedgerReader(state);
    try {
      for (const number of data.errored) {
        const detail = reader.read.account('ACME', number)?.error?.detail ?? '';
        expect(detail.endsWith(stated), detail.slice(-80)).toBe(true);
        expect(detail.length).toBe(2_000 + stated.length);
      }
    } finally {
      reader.close();
    }
    expect(statSync(join(state, 'ledger.sqlite')).size).toBeLessThan(2 * 1024 * 1024);
    expect(statSync(log).size).toBeLessThan(100_000);
    expect(run.stdout.length + run.stderr.length).toBeLessThan(50_000);

    const out = join(root, 'big-report');
    const report = await runMigrate(['report', '--state', state, '--out', out]);
    expect(report.code, report.stderr).toBe(0);
    const fixData = readFileSync(join(out, 'fix-data.csv'), 'utf8');
    expect(fixData).toContain(stated);
    expect(fixData.length).toBeLessThan(50_000);

    const status = await runMigrate(['status', 'ACME', '--state', state, '--base-url', sandbox.url], env);
    expect(status.stdout.length + status.stderr.length, status.stderr.slice(0, 2000)).toBeLessThan(50_000);
  });
});
