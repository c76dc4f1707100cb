import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { ROOT, SAMPLE_OPEN_PERIOD, SAMPLE_PERIOD_FLAGS, type RunResult } from './helpers.js';

// A ledger that knows its service (docs/reruns.md): the real binary, a state directory pushed to one service
// and then pointed at another.

const BIN = join(ROOT, 'bin', 'migrate.js');
let root: string;
let other: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ledger-service-'));
  other = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
});
afterAll(async () => {
  await other.close();
  rmSync(root, { recursive: true, force: true });
});

function migrate(args: string[], apiKey = other.apiKey): Promise<RunResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, MIGRATE_API_KEY: apiKey, NO_COLOR: '1', MIGRATE_BASE_URL: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

const recordedService = (state: string) => {
  const reader = openLedgerReader(state);
  try {
    return reader.read.service();
  } finally {
    reader.close();
  }
};

describe('the service of a state directory', () => {
  it('a sandbox rehearsal ledger: --sandbox reruns work (a new port each), another service is exit 2 naming both', async () => {
    const state = join(root, 'rehearsal');
    const first = await migrate(['push', 'fixtures/sample', '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', state]);
    expect(first.code, first.stderr).toBe(0);
    expect(recordedService(state)).toEqual({ url: 'sandbox:built-in', dialect: 'spec' });
    const again = await migrate(['push', 'fixtures/sample', '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', state]);
    expect(again.code, again.stderr).toBe(0);
    // A rerun that changed nothing says so in one line.
    expect(again.stdout.trim()).toBe(
      'push changed nothing in the ledger: everything done (every account and record settled)',
    );

    other.inspect.resetLog();
    const elsewhere = await migrate(['push', 'fixtures/sample', '--base-url', other.url, '--state', state]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(
      `the state directory ${state} was used with the built-in sandbox (--sandbox) (spec dialect); this run asks for ` +
        `${other.url} (spec dialect).`,
    );
    expect(elsewhere.stderr).toContain('--move-ledger-to-service');
    expect(elsewhere.stderr).toContain('(this one belongs to the sandbox: throw it away)');
    expect(elsewhere.stderr).not.toMatch(/\n\s+at /);
    expect(other.inspect.requestCount()).toBe(0);

    const status = await migrate(['status', 'ACME', '--state', state, '--base-url', other.url]);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('or read the ledger alone with --offline');
    expect(other.inspect.requests().filter((entry) => !entry.path.includes('graphql'))).toHaveLength(0);
    const offline = await migrate(['status', 'ACME', '--state', state, '--offline']);
    expect(offline.code, offline.stderr).toBe(0);
  });

  it('--move-ledger-to-service records the new service once a run is answered; later runs need no flag', async () => {
    const first = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    const state = join(root, 'moved');
    try {
      const pushed = await migrate(
        ['push', 'fixtures/sample', '--base-url', first.url, '--state', state],
        first.apiKey,
      );
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(recordedService(state)).toEqual({ url: first.url, dialect: 'spec' });
    } finally {
      await first.close();
    }
    // The old URL is gone (a DNS change): the same platform answers under a new one.
    const refused = await migrate(['push', 'fixtures/sample', '--base-url', other.url, '--state', state]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`was used with ${first.url} (spec dialect); this run asks for ${other.url}`);
    const moved = await migrate([
      'push',
      'fixtures/sample',
      '--base-url',
      other.url,
      '--state',
      state,
      '--move-ledger-to-service',
    ]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stderr).toContain(`--move-ledger-to-service: the ledger of ${state} moves from ${first.url}`);
    expect(recordedService(state)).toMatchObject({ url: other.url, dialect: 'spec' });
    expect(recordedService(state)?.note).toMatch(new RegExp(`^moved by run 2 at \\S+ from ${first.url} \\(spec`));
    const after = await migrate(['push', 'fixtures/sample', '--base-url', other.url, '--state', state]);
    expect(after.code, after.stderr).toBe(0);
  });

  it('a first run the service does not answer (wrong URL or key) records no service: the corrected rerun runs', async () => {
    const wrong = await startSandbox({ processingMs: 0 });
    const state = join(root, 'typo');
    try {
      const refused = await migrate(
        ['push', 'fixtures/sample', '--base-url', wrong.url, '--state', state],
        'not-the-key-of-this-service',
      );
      expect(refused.code).toBe(3);
      // Refused before the run started: the state directory it made is gone again, no service recorded anywhere.
      expect(existsSync(state), 'nothing written').toBe(false);
    } finally {
      await wrong.close();
    }
    const fixed = await migrate(['push', 'fixtures/sample', '--base-url', other.url, '--state', state]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(recordedService(state)).toEqual({ url: other.url, dialect: 'spec' });
  });
});

describe('status of a supplier code the ledger does not hold', () => {
  it('is exit 2 naming the codes it holds (a typo must not read as "nothing to do")', async () => {
    const state = join(root, 'codes');
    const pushed = await migrate(['push', 'fixtures/sample', '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', state]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const typo = await migrate(['status', 'acme', '--state', state, '--offline']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(
      `the ledger in ${state} holds no accounts of import supplier "acme"; it holds "ACME" (codes are case-sensitive)`,
    );
    expect(typo.stdout).toBe('');
    const json = await migrate(['status', 'NORTH', '--state', state, '--offline', '--json']);
    expect(json.code).toBe(2);
    expect(json.stdout).toBe('');
  });
});
