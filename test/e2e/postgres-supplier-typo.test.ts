import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { writeE2eExport } from './export.js';
import { runMigrate } from './run-push.js';

// A mistyped supplier code in the export, corrected, on a PostgreSQL ledger: the accounts staged under the typo go
// from PostgreSQL too (the working copy's removals are shipped), and the corrected push lands every account once.

let root: string;
let cluster: TestCluster;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pg-supplier-typo-'));
  cluster = await startTestCluster();
  sandbox = await startSandbox({ processingMs: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every CSV of the export with `from` as its supplier code replaced by `to`. */
function renameSupplier(dir: string, from: string, to: string): void {
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.csv')))
    writeFileSync(join(dir, file), readFileSync(join(dir, file), 'utf8').replaceAll(`,${from},`, `,${to},`));
}

describe('a mistyped supplier code in the export, corrected, on a PostgreSQL ledger', () => {
  it('exit 3, then exit 0: every account once under the right code, none under the typo, in the service or ledger', async () => {
    const url = await cluster.newDatabase();
    const data = writeE2eExport(root, 12, 'PGT', 'spec', { clean: true });
    renameSupplier(data.dir, 'ACME', 'ACMX');
    const env = { MIGRATE_API_KEY: sandbox.apiKey, MIGRATE_LEDGER_URL: url };
    const typo = await runMigrate(['push', data.dir, '--base-url', sandbox.url], env);
    expect(typo.code, typo.stderr).toBe(3);
    renameSupplier(data.dir, 'ACMX', 'ACME');
    const corrected = await runMigrate(['push', data.dir, '--base-url', sandbox.url], env);
    expect(corrected.code, corrected.stderr).toBe(0);
    expect(corrected.stderr).toContain('import supplier ACMX: the service refused it as unknown');
    const created = sandbox.inspect.accounts('ACME');
    expect(created).toHaveLength(12);
    expect(created.every((account) => account.createRequestsAccepted === 1)).toBe(true);
    expect(sandbox.inspect.accounts('ACMX')).toEqual([]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query<{ s: string; n: number }>(
        'SELECT import_supplier AS s, COUNT(*) AS n FROM accounts GROUP BY 1 ORDER BY 1',
      );
      expect(rows.rows.map((row) => [row.s, Number(row.n)])).toEqual([['ACME', 12]]);
    } finally {
      await client.end();
    }
  });
});
