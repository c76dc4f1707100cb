import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { runMigrate, SAMPLE_EXPORT } from './run-push.js';

// An import supplier code the service does not know (a typo) against one it knows that is Paused: the service answers
// them with different codes (invalid_import_supplier, import_supplier_migration_not_ongoing), and each message says
// what happened and what to do. status without a ledger learns of the typo from the service: a mistake to fix, exit
// 2, as when the ledger holds no account of the code; a push stops with exit 3 (it has staged the export).
let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'supplier-unknown-'));
  sandbox = await startSandbox({ processingMs: 0, suppliers: { ACME: 'Ongoing', PAUSED: 'Paused' } });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ MIGRATE_API_KEY: sandbox.apiKey });

/** The sample export without any import_supplier column: the supplier comes from --supplier. */
function exportWithoutSupplier(name: string): string {
  const dir = join(root, name);
  cpSync(SAMPLE_EXPORT, dir, { recursive: true });
  for (const file of readdirSync(dir).filter((entry) => entry.endsWith('.csv'))) {
    const rows = readFileSync(join(dir, file), 'utf8').trimEnd().split('\n');
    const at = rows[0]!.split(',').indexOf('import_supplier');
    if (at < 0) continue;
    const cut = rows.map((row) =>
      row
        .split(',')
        .filter((_, index) => index !== at)
        .join(','),
    );
    writeFileSync(join(dir, file), `${cut.join('\n')}\n`);
  }
  const notes = join(dir, 'notes.ndjson');
  const lines = readFileSync(notes, 'utf8').trimEnd().split('\n');
  const without = lines.map((line) => {
    const { import_supplier: _dropped, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify(rest);
  });
  writeFileSync(notes, `${without.join('\n')}\n`);
  return dir;
}

describe('a supplier code the service does not know', () => {
  it('status without a ledger: exit 2 saying the service does not know it and where the code comes from', async () => {
    // (The default state directory of a working directory that holds none: a --state given must hold a ledger.)
    const status = await runMigrate(['status', 'ACMEE', '--base-url', sandbox.url], env(), undefined, root);
    expect(status.code, status.stderr).toBe(2);
    expect(status.stderr).toContain(
      'migrate: listAllImports: the service does not know the import supplier (invalid_import_supplier: "ACMEE" is ' +
        'not an import supplier of this service.). Check the supplier code (codes are case-sensitive)',
    );
    expect(status.stderr).toContain("push's --supplier, MIGRATE_SUPPLIER, the mapping file's import_supplier");
    expect(status.stderr).toContain('ask the platform operators to set the supplier up');
    expect(status.stderr).not.toContain('not accepting migrations');
    expect(status.stderr).not.toMatch(/\n\s+at /);
    expect(status.stdout).toBe('');
  });

  it('push: exit 3 naming the code and the settings it comes from; no account created', async () => {
    const dir = exportWithoutSupplier('typo');
    const run = await runMigrate(
      ['push', dir, '--base-url', sandbox.url, '--state', join(root, 'typo-state'), '--supplier', 'ACMEE'],
      env(),
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('the service does not know import supplier ACMEE, or does not take it yet');
    expect(run.stderr).toContain("check the code (--supplier, MIGRATE_SUPPLIER, the mapping file's import_supplier");
    expect(run.stderr).not.toContain('not accepting migrations');
    expect(sandbox.inspect.accounts('ACMEE')).toEqual([]);
  });
});

describe('a supplier the service knows that is Paused', () => {
  it('push: exit 3, "not accepting migrations", and to ask the platform operators; no account created', async () => {
    const dir = exportWithoutSupplier('paused');
    const paused = await runMigrate(
      ['push', dir, '--base-url', sandbox.url, '--state', join(root, 'paused-state-2'), '--supplier', 'PAUSED'],
      env(),
    );
    expect(paused.code, paused.stderr).toBe(3);
    expect(paused.stderr).toContain(
      'the import supplier is not accepting migrations: it is Paused or Complete on the service; ask the platform ' +
        'operators to set it Ongoing',
    );
    expect(paused.stderr).toContain('The migration of import supplier PAUSED is paused');
    expect(paused.stderr).not.toContain('does not know');
    expect(sandbox.inspect.accounts('PAUSED')).toEqual([]);
  });
});
