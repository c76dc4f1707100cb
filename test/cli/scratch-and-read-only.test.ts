import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryForAnotherUser } from '../e2e/another-user.js';
import { SAMPLE_PERIOD_FLAGS } from '../e2e/helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// No internal error when the disk says no (docs/limits.md "Scratch space" and "The state
// directory's disk"): validate with TMPDIR full (a tiny tmpfs, as root) or a file-size limit (ulimit -f) while it sorts an
// export out of order is exit 3 naming TMPDIR and the room needed; push on a read-only directory holding only
// ledger.sqlite names the directory as read-only and why (SQLite's WAL writes beside the file).

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');
const asRoot = process.getuid?.() === 0;
/** As root: the user owning the read-only state directory (nobody). */
const OWNER_UID = 65534;

let dir: string;
let exportDir: string;

function run(shell: string, env: NodeJS.ProcessEnv = {}, uid?: number): { code: number | null; stderr: string } {
  const as = uid === undefined ? {} : { uid, gid: uid };
  const child = spawnSync('sh', ['-c', shell], { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env }, ...as });
  return { code: child.status, stderr: afterOriginLine(child.stderr) };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'scratch-read-only-'));
  // Another user must reach the files inside (the binary and the export are read by it).
  chmodSync(dir, 0o755);
  exportDir = join(dir, 'export');
  cpSync(join(ROOT, 'fixtures', 'sample'), exportDir, { recursive: true });
  // About 1 MB of notes, last account first: validate sorts them in its scratch space.
  const lines: string[] = [];
  for (let account = 50; account >= 1; account -= 1)
    for (let note = 0; note < 40; note += 1)
      lines.push(
        JSON.stringify({
          external_account_number: `SAMPLE-${String(account).padStart(4, '0')}`,
          import_supplier: 'ACME',
          body: `note ${note} ${'x'.repeat(400)}`,
          created_at: `2026-10-${String(1 + (note % 28)).padStart(2, '0')}T09:00:00Z`,
        }),
      );
  writeFileSync(join(exportDir, 'notes.ndjson'), `${lines.join('\n')}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NEEDS = /sorting this export needs about 2\.2 MB free there \(2 times its files' 1\.1 MB\)\. Free space there/;

describe('the scratch space running out while validate sorts', () => {
  it('under a file-size limit (ulimit -f): exit 3 naming TMPDIR and the room needed', () => {
    const result = run(`ulimit -f 400; exec "${process.execPath}" "${BIN}" validate export`, { TMPDIR: dir });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(new RegExp(`^migrate: TMPDIR \\(${dir}\\) could not be written while the export`));
    expect(result.stderr).toMatch(NEEDS);
    expect(result.stderr).not.toContain('internal error');
  });

  it('under a file-size limit while a CSV file out of order is put in order by its rows places: exit 3, the same message', () => {
    // Every file CSV (the streaming join): the notes, last account first, are placed on the key-scan threads.
    const csvExport = join(dir, 'csv-export');
    cpSync(join(ROOT, 'fixtures', 'sample'), csvExport, { recursive: true });
    rmSync(join(csvExport, 'notes.ndjson'));
    rmSync(join(csvExport, 'statements.json'));
    const rows = ['external_account_number,body,created_at'];
    for (let account = 50; account >= 1; account -= 1)
      for (let note = 0; note < 400; note += 1)
        rows.push(`SAMPLE-${String(account).padStart(4, '0')},note ${note},2026-10-01T09:00:00Z`);
    writeFileSync(join(csvExport, 'notes.csv'), `${rows.join('\n')}\n`);
    const result = run(`ulimit -f 200; exec "${process.execPath}" "${BIN}" validate csv-export`, { TMPDIR: dir });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(
      new RegExp(`^migrate: TMPDIR \\(${dir}\\) could not be written while the export was sorted \\(a file-size limit`),
    );
    expect(result.stderr).toMatch(/sorting this export needs about [\d.]+ MB free there/);
    expect(result.stderr).not.toContain('internal error');
  });

  it.runIf(asRoot)('with TMPDIR a full tmpfs: exit 3 naming TMPDIR as full and the room needed', () => {
    const tiny = join(dir, 'tiny');
    mkdirSync(tiny);
    expect(run(`mount -t tmpfs -o size=256k tmpfs "${tiny}"`).code).toBe(0);
    try {
      const result = run(`exec "${process.execPath}" "${BIN}" validate export`, { TMPDIR: tiny });
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).toContain(
        `TMPDIR (${tiny}) could not be written while the export was sorted (the disk is full`,
      );
      expect(result.stderr).toMatch(NEEDS);
    } finally {
      run(`umount "${tiny}"`);
    }
  });
});

describe('push on a read-only directory holding only ledger.sqlite', () => {
  let ledger: string;
  beforeAll(() => {
    const state = join(dir, 'pushed');
    const pushed = run(
      `exec "${process.execPath}" "${BIN}" push export --sandbox ${SAMPLE_PERIOD_FLAGS.join(' ')} --state "${state}" --quiet`,
    );
    expect(pushed.code, pushed.stderr).toBe(0);
    ledger = join(state, 'ledger.sqlite');
  });

  it.runIf(asRoot)('on a read-only mount: exit 3, read-only and the WAL named', () => {
    const readOnly = join(dir, 'read-only');
    mkdirSync(readOnly);
    expect(run(`mount -t tmpfs -o size=8m,mode=0700 tmpfs "${readOnly}"`).code).toBe(0);
    try {
      copyFileSync(ledger, join(readOnly, 'ledger.sqlite'));
      expect(run(`mount -o remount,ro "${readOnly}"`).code).toBe(0);
      const result = run(`exec "${process.execPath}" "${BIN}" push export --sandbox --state "${readOnly}"`);
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).toBe(
        `migrate: --state ${readOnly}: the directory is read-only (EROFS: a read-only file system); push writes the ` +
          "ledger, and SQLite's write-ahead log (WAL) writes ledger.sqlite-wal and ledger.sqlite-shm beside the " +
          'file, so the directory itself must be writable, not only ledger.sqlite; copy the state directory to a ' +
          'writable place and give that --state.\n',
      );
    } finally {
      run(`umount "${readOnly}"`);
    }
  });

  it('made read-only by its owner (chmod a-w): exit 2, the WAL named', () => {
    const readOnly = join(dir, 'chmod-read-only');
    mkdirSync(readOnly);
    copyFileSync(ledger, join(readOnly, 'ledger.sqlite'));
    // As root (who may write anywhere), the directory's owner is another user who runs the push.
    if (asRoot) chownSync(readOnly, OWNER_UID, OWNER_UID);
    if (asRoot) chownSync(join(readOnly, 'ledger.sqlite'), OWNER_UID, OWNER_UID);
    chmodSync(readOnly, 0o555);
    try {
      // The owner runs a copy of the command it can reach: the checkout may be where only root may enter.
      const bin = asRoot ? binaryForAnotherUser(join(dir, 'migrate')) : BIN;
      const result = run(
        `exec "${process.execPath}" "${bin}" push export --sandbox --state "${readOnly}"`,
        {},
        asRoot ? OWNER_UID : undefined,
      );
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(
        "push writes the ledger, and SQLite's write-ahead log (WAL) writes ledger.sqlite-wal and ledger.sqlite-shm " +
          'beside the file, so the directory itself must be writable, not only ledger.sqlite; make the directory ' +
          'writable (chmod u+w), or give another --state.',
      );
    } finally {
      chmodSync(readOnly, 0o755);
    }
  });
});
