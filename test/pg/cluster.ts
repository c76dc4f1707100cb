import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Where Debian's postgresql package puts the server's programs, newest version first (.ci/run installs it). */
export const PG_BIN = process.env['MIGRATE_TEST_PG_BIN'] ?? debianBin();

function debianBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name)) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0] ?? '15';
  return join(root, newest, 'bin');
}

/** A throwaway PostgreSQL server for one test file: a cluster in a temporary directory on a unix socket. */
export interface TestCluster {
  /** A URL of a new, empty database of its own. */
  newDatabase(): Promise<string>;
  /** Stops the server (fast shutdown) and waits for it; `restart` starts it again on the same socket. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes the cluster. */
  close(): Promise<void>;
}

let databases = 0;

/**
 * MIGRATE_TEST_PG_URL names a server to use instead (a database on it is created per call of newDatabase; stop and
 * start are then refused). Without the programs the test fails, never skips: CI installs them.
 */
export async function startTestCluster(): Promise<TestCluster> {
  const given = process.env['MIGRATE_TEST_PG_URL'];
  if (given !== undefined) return externalCluster(given);
  if (!existsSync(join(PG_BIN, 'postgres')))
    throw new Error(
      `PostgreSQL is not installed (${PG_BIN}/postgres): apt-get install postgresql, or set MIGRATE_TEST_PG_URL`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'migrate-pg-'));
  const asPostgres = userInfo().uid === 0;
  if (asPostgres) chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  const data = join(dir, 'data');
  run(asPostgres, [join(PG_BIN, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  let server: ChildProcess | undefined;
  const base = `postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}`;
  const start = async (): Promise<void> => {
    const args = ['-D', data, '-k', dir, '-c', 'listen_addresses=', '-c', 'fsync=off', '-c', 'max_connections=200'];
    server = spawn(
      asPostgres ? 'runuser' : join(PG_BIN, 'postgres'),
      asPostgres ? ['-u', 'postgres', '--', join(PG_BIN, 'postgres'), ...args] : args,
      {
        stdio: 'ignore',
      },
    );
    await waitReady(base);
  };
  const stop = async (): Promise<void> => {
    const child = server;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    run(asPostgres, [join(PG_BIN, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']);
    await exited;
  };
  await start();
  // A test process that ends without close() (a timeout, an interrupted bench) stops the server too: no cluster outlives it.
  const leftOver = (): void => {
    if (server?.exitCode !== null) return;
    try {
      run(asPostgres, [join(PG_BIN, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', leftOver);
  return {
    newDatabase: () => createDatabase(base, (name) => `postgresql://postgres@/${name}?host=${encodeURIComponent(dir)}`),
    stop,
    start,
    close: async () => {
      process.off('exit', leftOver);
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function run(asPostgres: boolean, argv: string[]): void {
  const [program, ...args] = asPostgres ? ['runuser', '-u', 'postgres', '--', ...argv] : argv;
  execFileSync(program ?? '', args, { stdio: 'pipe' });
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user]).toString().trim());
}

function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user]).toString().trim());
}

/** Waits until the server accepts connections (an event: the connection, tried again at once on refusal). */
async function waitReady(url: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  throw new Error('the test PostgreSQL server did not start');
}

async function createDatabase(adminUrl: string, urlOf: (name: string) => string): Promise<string> {
  databases += 1;
  const name = `migrate_test_${process.pid}_${databases}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return urlOf(name);
}

function externalCluster(url: string): TestCluster {
  const parsed = new URL(url);
  const urlOf = (name: string): string => {
    const copy = new URL(url);
    copy.pathname = `/${name}`;
    return copy.toString();
  };
  const refuse = (): Promise<void> =>
    Promise.reject(new Error(`MIGRATE_TEST_PG_URL names a server this test cannot stop (${parsed.host})`));
  return { newDatabase: () => createDatabase(url, urlOf), stop: refuse, start: refuse, close: async () => undefined };
}
