import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleJson, visibleStrings, visibleText, visibleValue } from '../../src/errors.js';
import { SAMPLE_PERIOD_FLAGS } from '../e2e/helpers.js';

// What reaches the operator's terminal from outside (an export cell validate quotes, an error stored in the ledger
// that `status --account` shows, a file name) never carries a control character the terminal would obey
// (docs/operators-guide.md "What reaches your terminal"): OSC 52 could write the clipboard, CSI 2J clear the screen.

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');
/** OSC 52 (set the clipboard to "hi"), BEL, then CSI 2J (clear the screen) as one C1 character. */
const HOSTILE = '\u001b]52;c;aGk=\u0007\u009b2J';
const SHOWN = '\\x1b]52;c;aGk=\\x07\\x9b2J';
/** Anything a terminal obeys: C0 but tab and line feed, DEL, C1. */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

let dir: string;

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'terminal-text-'));
  cpSync(join(ROOT, 'fixtures', 'sample'), join(dir, 'export'), { recursive: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('visibleText', () => {
  it('shows C0 (but tab and line feed), DEL, C1 and bidirectional overrides as escapes; keeps the rest', () => {
    expect(visibleText(`a${HOSTILE}\tb\nc\r\u007f\u202e€é`)).toBe(`a${SHOWN}\tb\nc\\x0d\\x7f\\u202e€é`);
  });
  it('a file name or value inside a line: line breaks and tabs escaped too (visibleValue, visibleStrings)', () => {
    expect(visibleValue(`a\n2026-11-28 run 7 push finished\tx${HOSTILE}`)).toBe(
      `a\\n2026-11-28 run 7 push finished\\tx${SHOWN}`,
    );
    expect(visibleStrings({ file: 'a\nb', lines: ['c\td'], line: 3 })).toEqual({
      file: 'a\\nb',
      lines: ['c\\td'],
      line: 3,
    });
  });

  it('in JSON text, writes them as JSON escapes: the same value for a program', () => {
    const json = visibleJson(JSON.stringify({ cell: HOSTILE }));
    expect(json).not.toMatch(RAW);
    expect(JSON.parse(json)).toEqual({ cell: HOSTILE });
  });
});

describe('the print edges', () => {
  it('validate quotes an export cell with its controls shown, in text and in --json', () => {
    const accounts = join(dir, 'export', 'accounts.csv');
    const lines = readFileSync(accounts, 'utf8').split('\n');
    lines[1] = (lines[1] ?? '').replace(',false,', `,no${HOSTILE},`);
    writeFileSync(accounts, lines.join('\n'));
    try {
      const text = migrate(['validate', 'export']);
      expect(text.code).toBe(5);
      expect(text.stdout).toContain(`use_industry_billing: "no${SHOWN}" is not a boolean`);
      expect(text.stdout).not.toMatch(RAW);
      const json = migrate(['validate', 'export', '--json']);
      expect(json.stdout).not.toMatch(RAW);
      const parsed = JSON.parse(json.stdout) as { errors: Array<{ message: string }> };
      expect(parsed.errors[0]?.message).toContain(`"no${HOSTILE}"`);
    } finally {
      cpSync(join(ROOT, 'fixtures', 'sample', 'accounts.csv'), accounts);
    }
  });

  it('status --account shows an error stored in the ledger with its controls shown', () => {
    const state = join(dir, 'state');
    const pushed = migrate(['push', 'export', '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', state, '--quiet']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const db = new Database(join(state, 'ledger.sqlite'));
    db.prepare(
      "UPDATE accounts SET error_code = 'x', error_detail = ? WHERE external_account_number = 'SAMPLE-0001'",
    ).run(`the service said ${HOSTILE}`);
    db.close();
    const status = migrate(['status', 'ACME', '--state', state, '--offline', '--account', 'SAMPLE-0001']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`the service said ${SHOWN}`);
    expect(status.stdout).not.toMatch(RAW);
  });

  it("the service's own words (a refused key's message) are shown with their controls escaped", async () => {
    // A service that refuses the key with a message carrying the escapes (what a hostile or broken service may send).
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            data: null,
            errors: [{ message: `bad key ${HOSTILE}`, extensions: { errorCode: 'KT-CT-1139' } }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const args = [BIN, 'push', 'export', '--base-url', url, '--state', join(dir, 'state-refused')];
      const child = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, MIGRATE_API_KEY: 'k' } });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, output).toBe(3);
      expect(output).toContain(`bad key ${SHOWN}`);
      expect(output).not.toMatch(RAW);
    } finally {
      server.close();
    }
  });

  it('a file name in an error message is shown with its controls escaped', () => {
    const run = migrate(['validate', `no-such${HOSTILE}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no-such${SHOWN}`);
    expect(run.stderr).not.toMatch(RAW);
  });
});
