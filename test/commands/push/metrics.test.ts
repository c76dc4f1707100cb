import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_STATES, ITEM_KINDS, ITEM_STATES, type LedgerCounts } from '../../../src/ledger/index.js';
import { openLedgerSource } from '../../../src/commands/common/ledger-source.js';
import { PushMetrics, statusClassOf } from '../../../src/commands/push/metrics.js';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { writeOpsExport } from '../report/ops-export.js';

// push --metrics-file, read as Prometheus reads it: the real binary pushes to a sandbox that
// answers some requests 429 and 5xx, and the file it leaves is parsed by a Prometheus
// text-format parser (parse-prometheus-text-format, a port of the reference client's parser);
// every value is checked against the ledger and the sandbox's own request log.

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

type Sample = { value: number; labels: Record<string, string> };

function samples(text: string): Map<string, Sample[]> {
  const families = parsePrometheusTextFormat(text);
  return new Map(
    families.map((family) => [
      family.name,
      family.metrics.map((metric) => ({ value: Number(metric.value), labels: metric.labels ?? {} })),
    ]),
  );
}

const value = (all: Map<string, Sample[]>, name: string, labels: Record<string, string> = {}): number | undefined =>
  all.get(name)?.find((sample) => Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted))
    ?.value;

let dir: string;
let sandbox: RunningSandbox;
let exitCode: number | null;
let stderr = '';

describe('push --metrics-file against a sandbox with faults', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metrics-'));
    sandbox = await startSandbox({
      processingMs: 20,
      rateLimitRate: 0.1,
      failRate: 0.05,
      retryAfterSeconds: 0,
      seed: 7,
    });
    const ops = writeOpsExport(dir);
    mkdirSync(join(dir, 'textfile'));
    const child = spawn(
      process.execPath,
      [
        BIN,
        'push',
        ops.dir,
        '--base-url',
        sandbox.url,
        '--state',
        join(dir, 'state'),
        '--metrics-file',
        join(dir, 'textfile', 'migrate.prom'),
      ],
      { cwd: dir, env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' } },
    );
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    exitCode = await new Promise((resolve) => child.on('close', resolve));
  }, 120_000);

  afterAll(async () => {
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a Prometheus text file whose counts are the ledgers and whose requests are the sandbox log', () => {
    expect(exitCode, stderr).toBe(5);
    const file = join(dir, 'textfile', 'migrate.prom');
    const all = samples(readFileSync(file, 'utf8'));
    const source = openLedgerSource(join(dir, 'state'));
    const counts = source.counts();
    source.close();
    for (const state of ACCOUNT_STATES)
      expect(value(all, 'migrate_accounts', { state }), state).toBe(counts.accounts[state] ?? 0);
    for (const kind of ITEM_KINDS)
      for (const state of ITEM_STATES)
        expect(value(all, 'migrate_records', { kind, state }), `${kind} ${state}`).toBe(
          counts.items[kind]?.[state] ?? 0,
        );
    const rest = sandbox.inspect.requests().filter((request) => request.path !== '/v1/graphql/');
    const sum = (name: string, labels: Record<string, string> = {}): number =>
      (all.get(name) ?? [])
        .filter((sample) => Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted))
        .reduce((total, sample) => total + sample.value, 0);
    expect(sum('migrate_requests_total')).toBe(rest.length);
    for (const statusClass of ['2xx', '4xx', '5xx'])
      expect(sum('migrate_requests_total', { status_class: statusClass }), statusClass).toBe(
        rest.filter((request) => statusClassOf(request.status ?? undefined) === statusClass).length,
      );
    const limited = rest.filter((request) => request.status === 429).length;
    expect(limited).toBeGreaterThan(0);
    expect(sum('migrate_rate_limited_total')).toBe(limited);
    expect(sum('migrate_retries_total')).toBeGreaterThanOrEqual(limited);
    expect(value(all, 'migrate_requests_total', { endpoint: 'createAccount', status_class: '2xx' })).toBeGreaterThan(0);
  });

  it("tells the run's end: not in progress, exit code, start before end, a rate; every series labelled", () => {
    const all = samples(readFileSync(join(dir, 'textfile', 'migrate.prom'), 'utf8'));
    expect(value(all, 'migrate_run_in_progress')).toBe(0);
    expect(value(all, 'migrate_last_run_exit_code')).toBe(exitCode);
    const start = value(all, 'migrate_last_run_start_time_seconds') ?? 0;
    const end = value(all, 'migrate_last_run_end_time_seconds') ?? 0;
    expect(start).toBeGreaterThan(1.7e9);
    expect(end).toBeGreaterThanOrEqual(start);
    expect(value(all, 'migrate_run_start_time_seconds')).toBe(start);
    expect(value(all, 'migrate_last_run_accounts_per_second')).toBeGreaterThan(0);
    for (const [name, list] of all)
      for (const sample of list) expect(sample.labels['state_dir'], name).toBe(join(dir, 'state'));
  });

  it('is written whole: no temporary file is left, readable by a collector running as another user', () => {
    expect(readdirSync(join(dir, 'textfile'))).toEqual(['migrate.prom']);
    expect(statSync(join(dir, 'textfile', 'migrate.prom')).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(dir, 'textfile', 'migrate.prom'), 'utf8')).not.toContain(sandbox.apiKey);
  });
});

describe('PushMetrics', () => {
  const counts: LedgerCounts = {
    accounts: { done: 3, staged: 2 },
    items: { note: { done: 4 } },
    changedAfterImport: 0,
    recordsChangedAfterImport: {},
  };

  it('while the run goes on: in progress, the previous run as the last one; at the end: this run', async () => {
    const out = mkdtempSync(join(tmpdir(), 'metrics-unit-'));
    try {
      const file = join(out, 'm.prom');
      let now = 1_800_000_000_000;
      const metrics = new PushMetrics({
        file,
        ledgerLabel: '/srv/state',
        counts: () => counts,
        previousRun: { startedAt: now - 7_200_000, endedAt: now - 3_600_000, exitCode: 3 },
        runStartedAt: now,
        rate: () => 2.5,
        now: () => now,
      });
      metrics.onClientEvent({ type: 'response', endpoint: 'createAccount', status: undefined });
      await metrics.write();
      let all = samples(readFileSync(file, 'utf8'));
      expect(value(all, 'migrate_run_in_progress')).toBe(1);
      expect(value(all, 'migrate_last_run_exit_code')).toBe(3);
      expect(value(all, 'migrate_last_run_end_time_seconds')).toBe(1_800_000_000 - 3600);
      expect(all.has('migrate_last_run_accounts_per_second')).toBe(false);
      expect(value(all, 'migrate_requests_total', { status_class: 'none' })).toBe(1);
      expect(value(all, 'migrate_accounts', { state: 'errored' })).toBe(0);
      now += 90_000;
      await metrics.write({ exitCode: 0 });
      all = samples(readFileSync(file, 'utf8'));
      expect(value(all, 'migrate_run_in_progress')).toBe(0);
      expect(value(all, 'migrate_last_run_exit_code')).toBe(0);
      expect(value(all, 'migrate_last_run_end_time_seconds')).toBe(1_800_000_090);
      expect(value(all, 'migrate_last_run_accounts_per_second')).toBe(2.5);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('writes no last-run series before any run has ended (an unset gauge would read as exit code 0)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'metrics-unit-'));
    try {
      const file = join(out, 'm.prom');
      const metrics = new PushMetrics({
        file,
        ledgerLabel: '/s',
        counts: () => counts,
        runStartedAt: 0,
        rate: () => 0,
      });
      await metrics.write();
      const text = readFileSync(file, 'utf8');
      expect(text).not.toContain('migrate_last_run');
      expect(value(samples(text), 'migrate_run_in_progress')).toBe(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('a write that fails stops writing and is told, the run goes on', async () => {
    const metrics = new PushMetrics({
      file: join(tmpdir(), 'no-such-dir-for-metrics', 'm.prom'),
      ledgerLabel: '/s',
      counts: () => counts,
      runStartedAt: 0,
      rate: () => 0,
    });
    await metrics.write();
    expect((metrics.failure as NodeJS.ErrnoException | undefined)?.code).toBe('ENOENT');
  });
});
