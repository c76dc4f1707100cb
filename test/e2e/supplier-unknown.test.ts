import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { SAMPLE_OPEN_PERIOD } from './helpers.js';
import { runMigrate, SAMPLE_EXPORT } from './run-push.js';

// An import supplier code the service does not know (a typo) against one it knows that is Paused: the service answers
// them with different codes (invalid_import_supplier, import_supplier_migration_not_ongoing), and each message says
// what happened and what to do. status without a ledger learns of the typo from the service: a mistake to fix, exit
// 2, as when the ledger holds no account of the code; a push stops with exit 3 (it has staged the export).
let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'supplier-unknown-'));
  sandbox = await startSandbox({
    processingMs: 0,
    suppliers: { ACME: 'Ongoing', PAUSED: 'Paused' },
    openPeriodStart: SAMPLE_OPEN_PERIOD,
  });
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

describe('a mistyped supplier code, corrected in the same state directory', () => {
  it('push --supplier ACMX stops (exit 3); push --supplier ACME then just works: every account once, under ACME', async () => {
    const dir = exportWithoutSupplier('corrected');
    const state = join(root, 'corrected-state');
    const args = (code: string): string[] => [
      'push',
      dir,
      '--base-url',
      sandbox.url,
      '--state',
      state,
      '--supplier',
      code,
    ];
    const typo = await runMigrate(args('ACMX'), env());
    expect(typo.code, typo.stderr).toBe(3);
    expect(typo.stderr).toContain('the service does not know import supplier ACMX');

    const corrected = await runMigrate(args('ACME'), env());
    expect(corrected.code, corrected.stderr).toBe(0);
    expect(corrected.stderr).toMatch(
      /import supplier ACMX: the service refused it as unknown, so its \d+ account\(s\) that never reached the service are staged again from the export as it reads now/,
    );
    const created = sandbox.inspect.accounts('ACME');
    expect(created).toHaveLength(50);
    expect(new Set(created.map((account) => account.externalAccountNumber)).size).toBe(50);
    expect(created.every((account) => account.createRequestsAccepted === 1)).toBe(true);
    expect(sandbox.inspect.accounts('ACMX')).toEqual([]);

    // A third run: nothing left to do, no word of ACMX.
    const again = await runMigrate(args('ACME'), env());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('ACMX');
  });

  it('ledger forget --supplier CODE [--dry-run]: prints the never-sent accounts of the code, and removes them', async () => {
    const dir = exportWithoutSupplier('forget');
    const state = join(root, 'forget-state');
    const typo = await runMigrate(
      ['push', dir, '--base-url', sandbox.url, '--state', state, '--supplier', 'ACMY'],
      env(),
    );
    expect(typo.code, typo.stderr).toBe(3);
    const dry = await runMigrate(['ledger', 'forget', '--supplier', 'ACMY', '--dry-run', '--state', state], env());
    expect(dry.code, dry.stderr).toBe(0);
    // What the stopped push had staged (staging and sending go side by side): every number listed.
    const removable = /would remove (\d+) account\(s\) of import supplier ACMY that never reached the service/.exec(
      dry.stdout,
    );
    expect(Number(removable?.[1])).toBeGreaterThan(0);
    expect(dry.stdout).toContain('  SAMPLE-0001\n');
    expect(dry.stdout.match(/^ {2}SAMPLE-\d{4}$/gm)).toHaveLength(Number(removable?.[1]));
    expect(dry.stdout).toContain('Nothing was changed (--dry-run).');
    const forget = await runMigrate(['ledger', 'forget', '--supplier', 'ACMY', '--state', state], env());
    expect(forget.code, forget.stderr).toBe(0);
    expect(forget.stdout).toContain(`removed ${removable?.[1]} account(s) of import supplier ACMY`);
    const again = await runMigrate(['ledger', 'forget', '--supplier', 'ACMY', '--state', state], env());
    expect(again.stdout).toContain('removed 0 account(s) of import supplier ACMY');
  });
});
