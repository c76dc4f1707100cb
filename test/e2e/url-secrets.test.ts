import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrate, SAMPLE_EXPORT } from './run-push.js';

// A URL a user gives (the service's base URL, a proxy, the PostgreSQL ledger) is shown without its password, query or
// fragment, however it is written: with or without a scheme, with a password the URL parser cannot read. What the real
// binary prints, in --json and in push's NDJSON log, holds no secret.

const SECRET = 'hunter2-s3cret';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'url-secrets-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What a run printed and the log it wrote, if any. */
function seen(run: { stdout: string; stderr: string }, log?: string): string {
  return [run.stdout, run.stderr, log !== undefined && existsSync(log) ? readFileSync(log, 'utf8') : ''].join('\n');
}

describe('a password in the base URL', () => {
  const cases: Array<[string, string, string]> = [
    ['no scheme', `user:${SECRET}@host.example`, '…@host.example'],
    ['a user name and password', `https://user:${SECRET}@api.example.energy/v1`, 'https://…@api.example.energy/v1'],
    [
      'a password the parser cannot read',
      `https://user:pa/${SECRET}@api.example.energy`,
      'https://…@api.example.energy',
    ],
    ['a query and fragment', `https://api.example.energy/?token=${SECRET}#${SECRET}`, 'https://api.example.energy?…'],
  ];
  for (const [what, url, shown] of cases) {
    it(`${what}: refused with exit 2, the URL shown as ${shown} on stderr, in --json and in the log`, async () => {
      const log = join(root, `${what}.ndjson`);
      const state = join(root, `state-${what}`);
      const flag = await runMigrate(
        ['push', SAMPLE_EXPORT, '--base-url', url, '--state', state, '--json', '--log-file', log],
        { MIGRATE_API_KEY: 'k-123456' },
      );
      expect(flag.code, flag.stderr).toBe(2);
      expect(flag.stderr).toContain(`--base-url: expected `);
      expect(flag.stderr).toContain(`got "${shown}"`);
      expect(seen(flag, log)).not.toContain(SECRET);
      const variable = await runMigrate(['push', SAMPLE_EXPORT, '--state', state, '--json'], {
        MIGRATE_API_KEY: 'k-123456',
        MIGRATE_BASE_URL: url,
      });
      expect(variable.code, variable.stderr).toBe(2);
      expect(variable.stderr).toContain(`MIGRATE_BASE_URL: expected `);
      expect(seen(variable)).not.toContain(SECRET);
    });
  }

  it('config show names the variable with the URL shown without its password, as text and as --json', async () => {
    const env = { MIGRATE_BASE_URL: `user:${SECRET}@host.example` };
    const text = await runMigrate(['config', 'show', 'push'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/base_url +MIGRATE_BASE_URL=…@host\.example +environment/);
    const json = await runMigrate(['config', 'show', 'push', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(seen(text) + seen(json)).not.toContain(SECRET);
  });
});

describe('a password in a proxy URL', () => {
  it('is not shown when the proxy refuses: stderr and the NDJSON log name it as http://…@host', async () => {
    const log = join(root, 'proxy.ndjson');
    const run = await runMigrate(
      [
        'push',
        SAMPLE_EXPORT,
        '--base-url',
        'https://127.0.0.1:1',
        '--proxy',
        `http://proxy-user:${SECRET}@127.0.0.1:1`,
        '--state',
        join(root, 'proxy-state'),
        '--log-file',
        log,
      ],
      { MIGRATE_API_KEY: 'k-123456' },
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('--proxy=http://…@127.0.0.1:1/');
    expect(seen(run, log)).not.toContain(SECRET);
  });
});

describe('a password in the PostgreSQL ledger URL', () => {
  it('holding an @ or given as sslpassword=: shown as *** when the ledger cannot be reached', async () => {
    const url = `postgresql://migrate:pa@${SECRET}@127.0.0.1:1/acme?sslpassword=${SECRET}&password=${SECRET}`;
    const run = await runMigrate(['status', 'ACME', '--json'], { MIGRATE_LEDGER_URL: url });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(
      'the PostgreSQL ledger postgresql://migrate:***@127.0.0.1:1/acme?sslpassword=***&password=***:',
    );
    expect(seen(run)).not.toContain(SECRET);
  });

  it('that the client cannot read: exit 2 naming the variable, no internal error, no password', async () => {
    const run = await runMigrate(['status', 'ACME'], {
      MIGRATE_LEDGER_URL: `postgresql://migrate:pa/${SECRET}@127.0.0.1:5432/acme`,
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      'MIGRATE_LEDGER_URL postgresql://migrate:***@127.0.0.1:5432/acme: the PostgreSQL client cannot read this URL',
    );
    expect(run.stderr).not.toContain('internal error');
    expect(seen(run)).not.toContain(SECRET);
  });
});
