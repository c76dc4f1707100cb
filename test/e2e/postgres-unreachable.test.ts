import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import type { RunResult } from './helpers.js';
import { runMigrate, SAMPLE_EXPORT } from './run-push.js';

// A PostgreSQL ledger that cannot be reached when a command starts (docs/postgres.md "A database that cannot be
// reached at the start"): nothing was opened, so the command stops within seconds, long before --ledger-timeout (600 s
// here), saying where it went and what happened, with exit 3; it never says that anything was sent or is reconciled,
// and never shows the password. Each child is killed after BOUND_MS (the old code waited the whole --ledger-timeout):
// the test then fails on its exit code.

const BOUND_MS = 45_000;
const TEST_MS = 60_000;
const PASSWORD = 'pw-never-shown';

let root: string;
let sandbox: RunningSandbox;
let refusedPort: number;
let blackHole: Server;
const held: Socket[] = [];
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pg-unreachable-'));
  sandbox = await startSandbox({ processingMs: 0 });
  // A port nothing listens on: bound, then closed.
  const closed = createServer();
  refusedPort = await listening(closed);
  await new Promise((resolve) => closed.close(resolve));
  // A listener that accepts and never answers (a host whose firewall drops the packets behaves the same to pg).
  blackHole = createServer((socket) => held.push(socket));
  await listening(blackHole);
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => blackHole.close(resolve));
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

function listening(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

function push(url: string): Promise<RunResult> {
  const args = ['push', SAMPLE_EXPORT, '--base-url', sandbox.url, '--ledger-timeout', '600'];
  return runMigrate(args, { MIGRATE_API_KEY: sandbox.apiKey, MIGRATE_LEDGER_URL: url }, BOUND_MS);
}

function expectNothingOpened(result: RunResult): void {
  expect(result.code, result.stderr).toBe(3);
  expect(result.stderr).toContain('The ledger was never opened: nothing was recorded or sent.');
  expect(result.stderr).toContain('Check --ledger (or MIGRATE_LEDGER_URL');
  expect(result.stderr).not.toMatch(/reconcile|was unreachable for|no new work until/);
  expect(result.stderr).not.toContain(PASSWORD);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('push on a PostgreSQL ledger that cannot be reached at the start', () => {
  it(
    'a refused connection: exit 3 within seconds naming host:port, nothing sent',
    async () => {
      const result = await push(`postgresql://migrate:${PASSWORD}@127.0.0.1:${refusedPort}/acme`);
      expectNothingOpened(result);
      expect(result.stderr).toContain(
        `cannot open the PostgreSQL ledger postgresql://migrate:***@127.0.0.1:${refusedPort}/acme: ` +
          `127.0.0.1:${refusedPort} refused the connection, 3 tries`,
      );
      expect(sandbox.inspect.accounts('ACME')).toEqual([]);
    },
    TEST_MS,
  );

  it(
    "a host that never answers: exit 3 after the URL's connect_timeout, nothing sent",
    async () => {
      const port = (blackHole.address() as { port: number }).port;
      const result = await push(`postgresql://migrate:${PASSWORD}@127.0.0.1:${port}/acme?connect_timeout=2`);
      expectNothingOpened(result);
      expect(result.stderr).toContain(`127.0.0.1:${port} did not answer within 2 s`);
      expect(held.length).toBeGreaterThan(0);
      expect(sandbox.inspect.accounts('ACME')).toEqual([]);
    },
    TEST_MS,
  );
});

describe('status and report on a PostgreSQL ledger that cannot be reached', () => {
  it(
    'a refused connection and a host name that does not resolve: exit 3 saying which',
    async () => {
      const refused = `postgresql://migrate@127.0.0.1:${refusedPort}/acme`;
      const status = await runMigrate(['status', 'ACME', '--offline', '--ledger', refused], {}, BOUND_MS);
      expectNothingOpened(status);
      expect(status.stderr).toContain(`127.0.0.1:${refusedPort} refused the connection`);
      const unknown = 'postgresql://migrate@ledger-host.invalid/acme';
      const report = await runMigrate(['report', '--ledger', unknown, '--out', join(root, 'report')], {}, BOUND_MS);
      expectNothingOpened(report);
      // ENOTFOUND, or EAI_AGAIN where no name server answers (a machine without a network).
      expect(report.stderr).toMatch(/the host name ledger-host\.invalid does not resolve \(DNS: (ENOTFOUND|EAI_AGAIN)/);
    },
    TEST_MS,
  );
});
