import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { SAMPLE_OPEN_PERIOD } from '../e2e/helpers.js';

// The run configuration (docs/operators-guide.md "One file per cohort"), through the real binary: what a cohort's
// every command repeats, written once; flag over environment over file over default; `migrate config show`.
const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(root, 'bin', 'migrate.js');
const SAMPLE = join(root, 'fixtures', 'sample');
const scratch = mkdtempSync(join(tmpdir(), 'run-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function migrate(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('MIGRATE_') && !/_proxy$/i.test(name)),
  );
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...inherited, NO_COLOR: '1', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function cohortDir(name: string, settings: Record<string, unknown>): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migrate.run.json'), JSON.stringify(settings, null, 2));
  return dir;
}

/** `config show --json`'s settings by key. */
async function shown(cwd: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const result = await migrate(['config', 'show', ...args, '--json'], cwd, env);
  expect(result.stderr).toBe('');
  const document = JSON.parse(result.stdout) as {
    run_config: string | null;
    settings: Array<{ key: string; value: unknown; source: string; variable?: string }>;
  };
  return { file: document.run_config, settings: new Map(document.settings.map((setting) => [setting.key, setting])) };
}

describe('migrate config show COMMAND FLAGS', () => {
  it("takes the command's own flags (source: flag), states the defaults resolved later, refuses a flag it has not", async () => {
    const dir = cohortDir('show-flags', { concurrency: 2 });
    const settings = (await shown(dir, ['push', '--concurrency', '4'])).settings;
    expect(settings.get('concurrency')).toEqual({ key: 'concurrency', value: 4, source: 'flag' });
    const text = await migrate(['config', 'show', 'push', '--concurrency', '4'], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {2}concurrency +4 +flag$/m);
    expect(text.stdout).toMatch(/^ {2}progress_interval +60 +default$/m);
    expect(text.stdout).toMatch(/^ {2}header_form +bare +default$/m);
    expect(text.stdout).toMatch(/^ {2}dialect +spec, or the one the ledger was pushed in +default$/m);
    const refused = await migrate(['config', 'show', 'status', '--concurrency', '4'], dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('config show status: --concurrency is not a flag of status');
    const bad = await migrate(['config', 'show', 'push', '--concurrency', '0'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--concurrency');
  });
});

describe('one run configuration per cohort', () => {
  it('push, status and report read the same file: one ledger for all three, relative paths from the file', async () => {
    const sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    try {
      const dir = cohortDir('cohort-a', {
        base_url: sandbox.url,
        state: 'ledger-a',
        concurrency: 4,
        api_key_file: 'key',
      });
      writeFileSync(join(dir, 'key'), `${sandbox.apiKey}\n`, { mode: 0o600 });
      const elsewhere = join(scratch, 'elsewhere');
      mkdirSync(elsewhere, { recursive: true });
      const pushed = await migrate(['push', SAMPLE, '--run-config', join(dir, 'migrate.run.json')], elsewhere);
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(existsSync(join(dir, 'ledger-a', 'ledger.sqlite'))).toBe(true);
      expect(existsSync(join(elsewhere, '.migrate'))).toBe(false);
      const status = await migrate(['status', 'ACME', '--offline'], dir);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain('next: all 50 accounts done: nothing left to do');
      const report = await migrate(['report', '--out', join(scratch, 'report-a'), '--json'], dir);
      expect(report.code, report.stderr).toBe(0);
      expect(JSON.parse(report.stdout)).toMatchObject({ state_dir: join(dir, 'ledger-a'), accounts: { done: 50 } });
    } finally {
      await sandbox.close();
    }
  });

  it('a flag wins over the environment, which wins over the file, which wins over the default', async () => {
    const dir = cohortDir('cohort-b', { base_url: 'https://file.example', concurrency: 4, supplier: 'ACME' });
    const file = await shown(dir);
    expect(file.file).toBe(join(dir, 'migrate.run.json'));
    expect(file.settings.get('base_url')).toMatchObject({ value: 'https://file.example', source: 'file' });
    expect(file.settings.get('concurrency')).toMatchObject({ value: 4, source: 'file' });
    expect(file.settings.get('wait_timeout')).toMatchObject({ source: 'default' });
    const env = await shown(dir, [], { MIGRATE_BASE_URL: 'https://env.example', MIGRATE_API_KEY: 'k-secret-2' });
    expect(env.settings.get('base_url')).toMatchObject({
      value: 'https://env.example',
      source: 'environment',
      variable: 'MIGRATE_BASE_URL',
    });
    // The key is never shown, only where it is.
    expect(env.settings.get('api_key_file')).toEqual({
      key: 'api_key_file',
      source: 'environment',
      variable: 'MIGRATE_API_KEY',
    });
    const text = await migrate(['config', 'show'], dir, { MIGRATE_API_KEY: 'k-secret-2' });
    expect(text.stdout).not.toContain('k-secret-2');
    expect(text.stdout).toMatch(/^ {2}api_key_file +MIGRATE_API_KEY \(not shown\) +environment$/m);
    // A flag: the command's own run, as the file would be overridden by --concurrency.
    const flagged = await migrate(['push', SAMPLE, '--concurrency', '0'], dir);
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain('--concurrency must be a whole number from 1 to 1024 (got "0")');
  });

  it("shows the shape engine's memory and disk by source, the defaults as sized on this machine", async () => {
    const dir = cohortDir('cohort-shape', { shape_memory: '2GB' });
    for (const command of ['validate', 'push', 'shape']) {
      const file = await shown(dir, [command]);
      expect(file.settings.get('shape_memory')).toMatchObject({ value: '2GB', source: 'file' });
      expect(file.settings.get('shape_temp_limit')).toMatchObject({ source: 'default' });
      expect(String(file.settings.get('shape_temp_limit')?.value)).toMatch(
        /^[\d.]+[MG]B \(50% of the [\d.]+[MG]B free in /,
      );
    }
    const env = await shown(dir, ['shape'], { MIGRATE_SHAPE_MEMORY: '300MB' });
    expect(env.settings.get('shape_memory')).toMatchObject({
      value: '300MB',
      source: 'environment',
      variable: 'MIGRATE_SHAPE_MEMORY',
    });
    const none = await shown(scratch, ['shape']);
    expect(String(none.settings.get('shape_memory')?.value)).toMatch(
      /^[\d.]+[MG]B \(25% of [\d.]+[MG]B \((its cgroup's limit|the machine's memory)\) within 128MB-1GB\)$/,
    );
    const bad = await migrate(['validate', SAMPLE], cohortDir('cohort-shape-bad', { shape_memory: 'lots' }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('shape_memory: --shape-memory takes a size with its unit');
  });

  it('refuses what it cannot honour: an unknown key, a value its flag would refuse, two ledgers (exit 2)', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ concurency: 3 }, 'unknown key concurency; the keys are base_url,'],
      [{ concurrency: 0 }, 'concurrency: --concurrency must be a whole number from 1 to 1024 (got "0")'],
      [{ quiet: 'yes' }, 'quiet is true or false, not "yes"'],
      [{ state: 's', ledger: 'postgresql://migrate@db/acme' }, 'names two ledgers (state and ledger)'],
    ];
    for (const [index, [settings, message]] of cases.entries()) {
      const dir = cohortDir(`bad-${index}`, settings);
      const result = await migrate(['push', SAMPLE, '--dry-run'], dir);
      expect(result.code, JSON.stringify(settings)).toBe(2);
      expect(result.stderr).toContain(`run configuration ${join(dir, 'migrate.run.json')}`);
      expect(result.stderr).toContain(message);
    }
    const missing = await migrate(['status', 'ACME', '--offline', '--run-config', 'nowhere.json'], scratch);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `run configuration ${join(scratch, 'nowhere.json')} (--run-config) cannot be read`,
    );
  });

  it('--state beside --ledger (or MIGRATE_LEDGER_URL) is refused, not one of them silently ignored', async () => {
    const both = await migrate(
      ['status', 'ACME', '--offline', '--state', 's', '--ledger', 'postgresql://m@db/a'],
      scratch,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--state and --ledger name two ledgers');
    const env = await migrate(['status', 'ACME', '--offline', '--state', 's'], scratch, {
      MIGRATE_LEDGER_URL: 'postgresql://m@db/a',
    });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('--state and MIGRATE_LEDGER_URL name two ledgers');
    // The file's state directory gives way to a ledger given on the command line or in the environment.
    const dir = cohortDir('cohort-c', { state: 'ledger-c' });
    const fromEnv = await shown(dir, ['status'], { MIGRATE_LEDGER_URL: 'postgresql://m:pw@db/a' });
    expect(fromEnv.settings.get('state')).toMatchObject({ source: 'default' });
    expect(fromEnv.settings.get('ledger')).toMatchObject({ source: 'environment' });
    expect(JSON.stringify([...fromEnv.settings.values()])).not.toContain('pw');
  });
});
