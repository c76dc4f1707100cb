import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, migrate, root } from './validate-helpers.js';

// A usage or configuration mistake exits 2 and writes nothing: no state directory, no ledger,
// no report file, in the working directory or anywhere given on the command line.

const sample = path.join(root, 'fixtures', 'sample');
let cwd: string;

beforeAll(() => {
  build();
  cwd = mkdtempSync(path.join(os.tmpdir(), 'migrate-no-trace-'));
  writeFileSync(path.join(cwd, 'bad-config.json'), '{"mapping":{"accounts":{"bogus":1}}}');
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const noCredentials = { MIGRATE_API_KEY: '', MIGRATE_BASE_URL: '', MIGRATE_TOKEN: '' };
const withKey = { ...noCredentials, MIGRATE_API_KEY: 'k' };

const cases: Array<{ name: string; args: string[]; env: NodeJS.ProcessEnv }> = [
  { name: 'push without a service URL', args: ['push', sample], env: noCredentials },
  { name: 'push without credentials', args: ['push', sample, '--base-url', 'http://127.0.0.1:1'], env: noCredentials },
  {
    name: 'push of a directory that does not exist',
    args: ['push', 'nope', '--base-url', 'http://127.0.0.1:1'],
    env: withKey,
  },
  {
    name: 'push with plain http to a remote host',
    args: ['push', sample, '--base-url', 'http://example.com'],
    env: withKey,
  },
  {
    name: 'push with a bad mapping file',
    args: ['push', sample, '--base-url', 'http://127.0.0.1:1', '--config', 'bad-config.json'],
    env: withKey,
  },
  {
    name: 'push with a log file in a missing directory',
    args: ['push', sample, '--base-url', 'http://127.0.0.1:1', '--log-file', 'no/such/dir/log.ndjson'],
    env: withKey,
  },
  { name: 'push with a bad flag', args: ['push', sample, '--concurrency', '0'], env: withKey },
  { name: 'push --dry-run without a service URL', args: ['push', sample, '--dry-run'], env: noCredentials },
  { name: 'validate of a missing directory', args: ['validate', 'nope', '--errors-csv', 'errors.csv'], env: {} },
  {
    name: 'validate with a bad mapping file',
    args: ['validate', sample, '--config', 'bad-config.json', '--errors-csv', 'errors.csv'],
    env: {},
  },
  { name: 'validate --remote without a service URL', args: ['validate', sample, '--remote'], env: noCredentials },
  { name: 'report without a ledger', args: ['report', '--out', 'report'], env: {} },
  { name: 'status without a ledger, offline', args: ['status', 'ACME', '--offline'], env: {} },
  { name: 'status without a service URL', args: ['status', 'ACME', '--state', 'st'], env: noCredentials },
];

describe('a mistaken invocation leaves no trace', () => {
  it.each(cases)('$name: exit 2, nothing written', ({ args, env }) => {
    const result = migrate(args, { cwd, env });
    expect(result.stderr).toMatch(/^(migrate|error): /m);
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.code).toBe(2);
    expect(readdirSync(cwd)).toEqual(['bad-config.json']);
  });
});
