import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryForAnotherUser } from '../e2e/another-user.js';
import { SAMPLE_PERIOD_FLAGS } from '../e2e/helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// What --state names, said as what it is before anything is read or written (docs/limits.md): a file, a path through
// a file, another user's 0700 directory (EACCES, not "ledger.sqlite not found"); and an export file this user may not
// read. Through the real binary; as root, the refused user is `nobody` (uid 65534), else the owner after chmod 000.

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');
const AS_ROOT = process.getuid?.() === 0;
const OTHER_UID = 65534;

let dir: string;
/** The command as the other user runs it: a copy it can reach, wherever the checkout is. */
let otherUsersBin: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'state-dir-'));
  // Another user must reach the files inside (the binary and the export are read by it).
  chmodSync(dir, 0o755);
  cpSync(join(ROOT, 'fixtures', 'sample'), join(dir, 'export'), { recursive: true });
  otherUsersBin = AS_ROOT ? binaryForAnotherUser(join(dir, 'migrate')) : BIN;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function migrate(args: string[], options: { otherUser?: boolean } = {}): { code: number | null; stderr: string } {
  const as = options.otherUser && AS_ROOT ? { uid: OTHER_UID, gid: OTHER_UID } : {};
  const run = spawnSync(process.execPath, [options.otherUser ? otherUsersBin : BIN, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, MIGRATE_API_KEY: 'sk-test-state-dir-0001', NO_COLOR: '1' },
    ...as,
  });
  return { code: run.status, stderr: afterOriginLine(run.stderr) };
}

/** A directory (or file) the refused user may not read: root's own 0700, or the owner's after chmod 000. */
function notPermitted(path: string): string {
  chmodSync(path, AS_ROOT ? 0o700 : 0o000);
  return AS_ROOT ? '0700' : '0000';
}

describe('--state naming what is not a state directory', () => {
  it('a file: exit 2 for push, push --dry-run, status and report, nothing written', () => {
    writeFileSync(join(dir, 'a-file'), 'not a directory');
    const said =
      `migrate: --state ${join(dir, 'a-file')}: is a file, not a directory; --state names the state directory that ` +
      'holds the ledger (ledger.sqlite), made if missing.\n';
    for (const args of [
      ['push', 'export', '--sandbox', '--state', 'a-file'],
      ['push', 'export', '--sandbox', '--state', 'a-file', '--dry-run'],
      ['status', 'ACME', '--state', 'a-file', '--offline'],
      ['report', '--state', 'a-file', '--out', 'report'],
    ]) {
      const run = migrate(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toBe(said);
    }
    const through = migrate(['push', 'export', '--sandbox', '--state', 'a-file/state']);
    expect(through.code).toBe(2);
    expect(through.stderr).toContain('a part of this path is a file, not a directory');
    expect(existsSync(join(dir, 'report'))).toBe(false);
  });

  it("another user's directory: EACCES named, for push, status and report", () => {
    const state = join(dir, 'private-state');
    const pushed = migrate(['push', 'export', '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', state, '--quiet']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const mode = notPermitted(state);
    try {
      for (const [args, what] of [
        [['status', 'ACME', '--state', state, '--offline'], 'cannot be read'],
        [['report', '--state', state, '--out', join(dir, 'other-report')], 'cannot be read'],
        [['push', 'export', '--sandbox', '--state', state], 'cannot be read and written'],
      ] as const) {
        const run = migrate([...args], { otherUser: true });
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr, args.join(' ')).toMatch(
          new RegExp(
            `^migrate: --state ${state}: ${what} by this user \\(uid \\d+\\): EACCES, permission denied \\(owner ` +
              `uid \\d+, mode ${mode}\\); run migrate as the state directory's owner, or give another --state\\.\\n$`,
          ),
        );
      }
    } finally {
      chmodSync(state, 0o700);
    }
  });
});

describe('an export file this user may not read', () => {
  it('is refused naming EACCES, before anything is read', () => {
    const exportDir = join(dir, 'unreadable-export');
    mkdirSync(exportDir);
    cpSync(join(ROOT, 'fixtures', 'sample'), exportDir, { recursive: true });
    chmodSync(exportDir, 0o755);
    notPermitted(join(exportDir, 'transactions.csv'));
    const run = migrate(['validate', exportDir], { otherUser: true });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^migrate: transactions\.csv: cannot be read \(EACCES: permission denied\) by the user running migrate \(uid \d+\); make it readable by that user, or run migrate as a user who can read it\.\n$/,
    );
  });
});
