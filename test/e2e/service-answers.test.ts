import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
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
    sandbox = await startSandbox({ processingMs: 0, htmlRate: 1 });
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
