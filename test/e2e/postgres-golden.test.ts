import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { writeE2eExport } from './export.js';
import { push, ROOT, writesReceived, type RunResult } from './helpers.js';

// One run, two stores: a push on a state directory's SQLite ledger, `migrate ledger copy` into PostgreSQL (compared
// row by row), then `status` and `report` on either store must say the same, byte for byte but for where the ledger
// is and when the output was made. A push on the copy then goes on where the state directory stopped.

let root: string;
let cluster: TestCluster;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'golden-pg-'));
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

function migrate(args: string[]): Promise<RunResult> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'migrate.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** Output as compared: the times it was made at and where the ledger and the report are, replaced. */
function normal(text: string, places: string[]): string {
  let out = text.replace(/(generated[_ ](?:at)?"?:? ?"?)\d{4}-\d\d-\d\dT[\d:.]+Z/g, '$1<now>');
  out = out.replace(/\(ledger only \(--offline\), [^)]+\)/, '(ledger only (--offline), <now>)');
  for (const place of places) out = out.split(place).join('<place>');
  // Hints name the ledger by the flag that reads it: --state DIR, --ledger 'URL' (its hidden password quoted).
  out = out.replaceAll("--ledger '<place>'", '--state <place>');
  // The same in report.html's commands, its quotes escaped.
  out = out.replaceAll('--ledger &#39;<place>&#39;', '--state <place>');
  // report.html names a state directory as such and a PostgreSQL ledger by its URL (asserted below).
  return out.replace('<p class="meta">ledger <place>', '<p class="meta">state directory <place>');
}

function reportFiles(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

it('status and report on a PostgreSQL ledger equal those on the SQLite ledger of the same run', async () => {
  const sandbox = await startSandbox({ processingMs: 60, failRate: 0.05, dropRate: 0.03, seed: 23, flakyAttempts: 1 });
  try {
    const data = writeE2eExport(join(root, 'run'), 30, 'GOLD');
    const state = join(root, 'run', 'state');
    const first = await push(sandbox, data.dir, state, ['--concurrency', '4']);
    expect(first.code, first.stderr).toBe(5); // invalid and ERRORED accounts: every section of status has rows
    const url = await cluster.newDatabase();
    const copy = await migrate(['ledger', 'copy', '--state', state, '--to', url]);
    expect(copy.code, copy.stderr).toBe(0);
    expect(copy.stdout).toMatch(/accounts\s+30 rows, 30 copied/);
    expect(copy.stdout).toContain('compared row by row before committing: identical.');
    const places = [state, url, join(root, 'sqlite-report'), join(root, 'pg-report')];
    for (const args of [
      ['ACME', '--offline'],
      ['ACME', '--offline', '--json'],
      ['ACME', '--offline', '--account', data.invalid[0] ?? ''],
    ]) {
      const [onSqlite, onPostgres] = await Promise.all([
        migrate(['status', ...args, '--state', state]),
        migrate(['status', ...args, '--ledger', url]),
      ]);
      expect(onSqlite.code).toBe(onPostgres.code);
      expect(normal(onPostgres.stdout, places)).toBe(normal(onSqlite.stdout, places));
      expect(onSqlite.stdout.length).toBeGreaterThan(200);
    }
    const sqliteReport = await migrate(['report', '--state', state, '--out', join(root, 'sqlite-report'), '--html']);
    const pgReport = await migrate(['report', '--ledger', url, '--out', join(root, 'pg-report'), '--html']);
    expect([sqliteReport.code, pgReport.code]).toEqual([0, 0]);
    expect(normal(pgReport.stdout, places)).toBe(normal(sqliteReport.stdout, places));
    const [left, right] = [reportFiles(join(root, 'sqlite-report')), reportFiles(join(root, 'pg-report'))];
    expect(Object.keys(right).sort()).toEqual(Object.keys(left).sort());
    for (const name of Object.keys(left))
      expect(normal(right[name] ?? '', places), name).toBe(normal(left[name] ?? '', places));
    expect(right['report.html']).toContain(`<p class="meta">ledger ${url} · generated`);

    // The copy is the ledger from now on: a rerun on it sends nothing new, and a second copy into it is refused.
    sandbox.control.setFaults({ failRate: 0, dropRate: 0 });
    sandbox.inspect.resetLog();
    const rerun = await push(sandbox, data.dir, state, ['--ledger', url]);
    expect(rerun.code, rerun.stderr).toBe(5);
    expect(writesReceived(sandbox)).toBe(0);
    const again = await migrate(['ledger', 'copy', '--state', state, '--to', url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is not empty \(30 accounts, 2 runs\)/);
  } finally {
    await sandbox.close();
  }
});
