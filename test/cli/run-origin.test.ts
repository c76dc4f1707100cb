import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { SAMPLE_OPEN_PERIOD } from '../e2e/helpers.js';

// Every command of a cohort says first, stamped, which run configuration it read (or none) and which service it talks
// to, so that a run configuration that sends the customers elsewhere (`base_url`) is seen on the first line, in cron
// mail and in a log file; `--json` documents and push's NDJSON log carry the same two facts. Through the real binary,
// in a working directory holding a `migrate.run.json`, against a sandbox over real HTTP.
const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(root, 'bin', 'migrate.js');
const SAMPLE = join(root, 'fixtures', 'sample');
/** The stamp push's non-terminal lines carry: the time and the run's id (`-`: none yet). */
const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) run - /;

let scratch: string;
let service: RunningSandbox;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'run-origin-'));
  service = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
});
afterAll(async () => {
  await service.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function migrate(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('MIGRATE_') && !/_proxy$/i.test(name)),
  );
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...inherited, NO_COLOR: '1', MIGRATE_TIMESTAMPS: '0', MIGRATE_API_KEY: service.apiKey, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A working directory, with a run configuration holding `settings` when given. */
function workingDir(name: string, settings?: Record<string, unknown>): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  if (settings) writeFileSync(join(dir, 'migrate.run.json'), JSON.stringify(settings));
  return dir;
}

const firstLine = (text: string): string => text.split('\n')[0] ?? '';

describe('the first line names the run configuration and the service', () => {
  it('a run configuration in the working directory: push says its path and the base_url it sets, stamped, first', async () => {
    const dir = workingDir('planted', { base_url: service.url, state: 'state' });
    const run = await migrate(['push', SAMPLE], dir, { MIGRATE_TIMESTAMPS: '' });
    expect(run.code, run.stderr).toBe(0);
    const line = firstLine(run.stderr);
    expect(line).toMatch(STAMP);
    expect(Number.isNaN(Date.parse(STAMP.exec(line)?.[1] ?? ''))).toBe(false);
    expect(line.replace(STAMP, '')).toBe(
      `migrate: run configuration ${join(dir, 'migrate.run.json')} (found in the working directory); ` +
        `service ${service.url} (base_url in the run configuration)`,
    );
  });

  it('without a run configuration it says none, and where the URL came from (--base-url, MIGRATE_BASE_URL)', async () => {
    const dir = workingDir('none');
    const flag = await migrate(['push', SAMPLE, '--base-url', service.url, '--state', 'a'], dir);
    expect(flag.code, flag.stderr).toBe(0);
    expect(firstLine(flag.stderr)).toBe(
      'migrate: run configuration none (no migrate.run.json here, MIGRATE_RUN_CONFIG not set); ' +
        `service ${service.url} (--base-url)`,
    );
    const variable = await migrate(['push', SAMPLE, '--state', 'b'], dir, { MIGRATE_BASE_URL: service.url });
    expect(variable.code, variable.stderr).toBe(0);
    expect(firstLine(variable.stderr)).toContain(`; service ${service.url} (MIGRATE_BASE_URL)`);
  });

  it('a run configuration named by --run-config or MIGRATE_RUN_CONFIG is said with how it was named', async () => {
    const cohort = workingDir('named', { base_url: service.url });
    const file = join(cohort, 'migrate.run.json');
    const elsewhere = workingDir('elsewhere');
    const flag = await migrate(['validate', SAMPLE, '--run-config', file], elsewhere);
    expect(firstLine(flag.stderr)).toBe(`migrate: run configuration ${file} (--run-config); no service contacted`);
    const variable = await migrate(['validate', SAMPLE, '--remote'], elsewhere, { MIGRATE_RUN_CONFIG: file });
    expect(firstLine(variable.stderr)).toBe(
      `migrate: run configuration ${file} (MIGRATE_RUN_CONFIG); service ${service.url} (base_url in the run configuration)`,
    );
  });

  it('validate --remote, status and report say it first too; validate alone and report contact no service', async () => {
    const dir = workingDir('cohort', { base_url: service.url, state: 'state', supplier: 'ACME' });
    const file = join(dir, 'migrate.run.json');
    const said = `migrate: run configuration ${file} (found in the working directory); `;
    const remote = await migrate(['validate', SAMPLE, '--remote'], dir);
    expect(remote.code, remote.stderr).toBe(0);
    expect(firstLine(remote.stderr)).toBe(`${said}service ${service.url} (base_url in the run configuration)`);
    const local = await migrate(['validate', SAMPLE], dir);
    expect(firstLine(local.stderr)).toBe(`${said}no service contacted`);
    expect((await migrate(['push', SAMPLE], dir)).code).toBe(0);
    const status = await migrate(['status'], dir);
    expect(firstLine(status.stderr)).toBe(`${said}service ${service.url} (base_url in the run configuration)`);
    const offline = await migrate(['status', '--offline'], dir);
    expect(firstLine(offline.stderr)).toBe(`${said}no service contacted`);
    const report = await migrate(['report', '--out', join(dir, 'report')], dir);
    expect(report.code, report.stderr).toBe(0);
    expect(firstLine(report.stderr)).toBe(`${said}no service contacted`);
  });

  it('--json documents carry run_config and service_url (null when none)', async () => {
    const dir = workingDir('json', { base_url: service.url, state: 'state', supplier: 'ACME' });
    const file = join(dir, 'migrate.run.json');
    const origin = { run_config: file, service_url: service.url };
    const plan = await migrate(['push', SAMPLE, '--dry-run', '--json'], dir);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ ...origin, dry_run: true });
    const push = await migrate(['push', SAMPLE, '--json'], dir);
    expect(push.code, push.stderr).toBe(0);
    expect(JSON.parse(push.stdout)).toMatchObject(origin);
    const remote = await migrate(['validate', SAMPLE, '--remote', '--json'], dir);
    expect(JSON.parse(remote.stdout)).toMatchObject(origin);
    const local = await migrate(['validate', SAMPLE, '--json'], dir);
    expect(JSON.parse(local.stdout)).toMatchObject({ run_config: file, service_url: null });
    const status = await migrate(['status', '--json'], dir);
    expect(JSON.parse(status.stdout)).toMatchObject(origin);
    const story = await migrate(['status', '--json', '--account', 'SAMPLE-0001'], dir);
    expect(JSON.parse(story.stdout)).toMatchObject(origin);
    const report = await migrate(['report', '--out', join(dir, 'report'), '--json'], dir);
    expect(JSON.parse(report.stdout)).toMatchObject({ run_config: file, service_url: null });
    const elsewhere = workingDir('json-none');
    const none = await migrate(['validate', SAMPLE, '--json'], elsewhere);
    expect(JSON.parse(none.stdout)).toMatchObject({ run_config: null, service_url: null });
  });

  it("push's NDJSON log: each run's first record names the run configuration and the service URL", async () => {
    const dir = workingDir('log', { base_url: service.url, state: 'state', log_file: 'push.ndjson' });
    for (const _ of [1, 2]) expect((await migrate(['push', SAMPLE], dir)).code).toBe(0);
    const records = readFileSync(join(dir, 'push.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const opened = records.filter((record) => record['event'] === 'log_opened');
    expect(records[0]).toMatchObject({ event: 'log_opened', run: 1 });
    expect(opened).toHaveLength(2);
    for (const record of opened)
      expect(record).toMatchObject({ run_config: join(dir, 'migrate.run.json'), service_url: service.url });
  });

  it('a URL with a user name and password is not shown with them; a line break in it cannot forge a line', async () => {
    const forged = '\n2026-11-27T04:20:00.000Z run 7 push finished: everything done';
    const dir = workingDir('forged', { base_url: `https://user:secret@x.example/${forged}` });
    const run = await migrate(['validate', SAMPLE, '--remote'], dir);
    expect(run.code).toBe(2);
    // As the client reads it: the line break dropped, the user name and password left out.
    expect(firstLine(run.stderr)).toContain('; service https://…@x.example/2026-11-27T04:20:00.000Z%20run%207%20push');
    expect(run.stderr).not.toContain('secret');
    expect(run.stderr).not.toMatch(/^2026-11-27T04:20:00\.000Z run 7/m);
  });
});
