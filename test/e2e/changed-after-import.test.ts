import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { push, ROOT, writesReceived } from './helpers.js';

// A post-import record changed in the export after it was sent (docs/reruns.md): the service has no update
// endpoint, so the platform keeps what was sent. For every kind, the rerun sends nothing and says so: in the push
// summary, in records.csv (changed_after_import) and in status (a list and the next step).

let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'changed-e2e-'));
  sandbox = await startSandbox({ processingMs: 20 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'migrate.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Replaces the first line of `file` (in the export) that contains `find` with what `change` makes of it. */
function changeLine(dir: string, file: string, find: string, change: (line: string) => string): number {
  const lines = readFileSync(join(dir, file), 'utf8').split('\n');
  const index = lines.findIndex((line) => line.includes(find));
  lines[index] = change(lines[index] ?? '');
  writeFileSync(join(dir, file), lines.join('\n'));
  return index + 1;
}

describe('a record changed in the export after it was sent', () => {
  it('is reported for every kind, by push, records.csv and status, and never sent again', async () => {
    const data = writeE2eExport(join(root, 'changed'), 4, 'CHG', 'spec', { clean: true });
    const state = join(root, 'changed', 'state');
    const first = await push(sandbox, data.dir, state);
    expect(first.code, first.stderr).toBe(0);
    const before = writesReceived(sandbox);
    // One record of each kind corrected in the export, its key unchanged.
    const notes = readFileSync(join(data.dir, 'notes.csv'), 'utf8').trimEnd().split('\n');
    writeFileSync(
      join(data.dir, 'notes.csv'),
      `${notes.map((line, index) => `${line},${index === 0 ? 'is_pinned' : index === 1 ? 'true' : ''}`).join('\n')}\n`,
    );
    const transactionLine = changeLine(data.dir, 'transactions.csv', 'CHG-0002-T1', (line) =>
      line.replace('12.50', '12.05'),
    );
    const statementLine = changeLine(data.dir, 'statements.csv', 'CHG-0002-S1', (line) =>
      line.replace('40.10', '41.10'),
    );
    const instructionLine = changeLine(data.dir, 'payment_instructions.csv', 'CHG-0002', (line) =>
      line.replace('STRIPE', 'GOCARDLESS'),
    );
    const rerun = await push(sandbox, data.dir, state);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toContain(
      '4 records changed in the export after they were sent (notes 1, transactions 1, statements 1, payment ' +
        'instructions 1); the service cannot update them and keeps what was sent: they are not sent again (see the ' +
        'report: records.csv, changed_after_import).',
    );
    expect(writesReceived(sandbox)).toBe(before);
    const account = sandbox.inspect.account('ACME', 'CHG-0002');
    expect(account?.transactions.find((t) => t.transactionId === 'CHG-0002-T1')?.data['amount']).toBe(12.5);
    expect(account?.historicalStatements.find((s) => s['statement_id'] === 'CHG-0002-S1')?.['gross_amount']).toBe(4010);
    expect(account?.paymentInstructions.map((pi) => pi.vendor)).toEqual(['STRIPE']);

    const report = migrate(['report', '--state', state, '--out', 'report']);
    expect(report.code, report.stderr).toBe(0);
    const records = parse(readFileSync(join(root, 'report', 'records.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    const changed = records.filter((row) => row['changed_after_import'] === 'yes');
    expect(changed.map((row) => [row['record'], row['record_key'], row['file'], row['line'], row['state']])).toEqual([
      ['note', '', 'notes.csv', '2', 'done'],
      ['transaction', 'CHG-0002-T1', 'transactions.csv', String(transactionLine), 'done'],
      ['statement', 'CHG-0002-S1', 'statements.csv', String(statementLine), 'done'],
      ['payment_instruction', 'pm_2', 'payment_instructions.csv', String(instructionLine), 'done'],
    ]);
    expect(records.filter((row) => row['changed_after_import'] === 'no')).toHaveLength(records.length - 4);
    const summary = JSON.parse(readFileSync(join(root, 'report', 'summary.json'), 'utf8')) as Record<string, unknown>;
    expect(summary['changed_after_import']).toEqual({
      accounts: 0,
      records: { note: 1, transaction: 1, statement: 1, payment_instruction: 1 },
    });

    const status = migrate(['status', 'ACME', '--state', state, '--offline']);
    expect(status.stdout).toContain('changed in the export after they were sent (4; the platform keeps what was sent)');
    expect(status.stdout).toContain(`CHG-0002  transaction  CHG-0002-T1  transactions.csv:${transactionLine}`);
    expect(status.stdout).toContain('next: 4 records changed in the export after they were sent: the platform keeps');
  });
});
