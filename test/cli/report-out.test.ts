import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_PERIOD_FLAGS } from '../e2e/helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// `migrate report --out` never writes into an export directory and never overwrites a file it did not write
// (docs/operators-guide.md "Reading the report"), through the real binary on a ledger a real push (--sandbox) wrote.

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

let dir: string;
let exportDir: string;
let state: string;
/** Every file of the export, as it was before any report ran. */
let original: Map<string, string>;

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env } });
  return { code: run.status, stdout: run.stdout, stderr: afterOriginLine(run.stderr) };
}

const filesOf = (at: string): Map<string, string> =>
  new Map(readdirSync(at).map((name) => [name, readFileSync(join(at, name), 'utf8')]));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'report-out-'));
  exportDir = join(dir, 'export');
  cpSync(join(ROOT, 'fixtures', 'sample'), exportDir, { recursive: true });
  state = join(dir, 'state');
  const pushed = migrate(['push', 'export', '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', state, '--quiet']);
  expect(pushed.code, pushed.stderr).toBe(0);
  original = filesOf(exportDir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migrate report --out', () => {
  it.each([
    ['the export directory', 'export', ''],
    ['a directory inside it (not made)', 'export/reports/today', 'inside '],
    ['the export directory through a symbolic link', 'link-to-export', ''],
  ])('refuses %s: exit 2, the export untouched', (_, out, inside) => {
    symlinkSync(exportDir, join(dir, 'link-to-export'), 'dir');
    try {
      const run = migrate(['report', '--state', state, '--out', out, '--html']);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `migrate: --out ${out}: ${join(dir, out === 'link-to-export' ? 'export' : out)} is ${inside}the export ` +
          `directory ${exportDir}; migrate never writes into an export directory (a file of its own could take ` +
          'the place of an export file). Give a path outside it.\n',
      );
      expect(filesOf(exportDir)).toEqual(original);
    } finally {
      rmSync(join(dir, 'link-to-export'));
    }
  });

  it('finds the export directory of a run recorded with the path as given only (before the real path was kept)', () => {
    const older = join(dir, 'older-state');
    cpSync(state, older, { recursive: true });
    const db = new Database(join(older, 'ledger.sqlite'));
    db.prepare("UPDATE runs SET options = json_remove(options, '$.exportDir')").run();
    db.close();
    const run = migrate(['report', '--state', older, '--out', 'export']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('is the export directory');
  });

  it('refuses a directory holding an export file, or a file of a report name it did not write', () => {
    const another = join(dir, 'another-export');
    cpSync(join(ROOT, 'fixtures', 'sample'), another, { recursive: true });
    const intoExport = migrate(['report', '--state', state, '--out', 'another-export']);
    expect(intoExport.code).toBe(2);
    expect(intoExport.stderr).toBe(
      'migrate: --out another-export: it holds accounts.csv, an export file; report files never go into an export ' +
        "directory (the report's accounts.csv would overwrite it). Give another --out.\n",
    );
    mkdirSync(join(dir, 'mine'));
    writeFileSync(join(dir, 'mine', 'records.csv'), 'my own notes\n');
    const foreign = migrate(['report', '--state', state, '--out', 'mine']);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain('records.csv there was not written by migrate report');
    expect(readFileSync(join(dir, 'mine', 'records.csv'), 'utf8')).toBe('my own notes\n');
    expect(readdirSync(join(dir, 'mine'))).toEqual(['records.csv']);
  });

  it('writes again over its own files', () => {
    for (let run = 0; run < 2; run += 1) {
      const written = migrate(['report', '--state', state, '--out', 'report', '--html']);
      expect(written.code, written.stderr).toBe(0);
    }
    expect(readdirSync(join(dir, 'report')).sort()).toEqual([
      'accounts.csv',
      'control-totals.csv',
      'fix-data.csv',
      'reconciliation.csv',
      'records.csv',
      'report.html',
      'retry.csv',
      'summary.json',
      'unknown-outcome.csv',
      'unused-rows.csv',
    ]);
  });

  it('an --out that cannot be made (under /proc) is exit 2 naming why, not a hang', () => {
    // Node's recursive mkdir never returns on such a path; the spawn's timeout is the hang's witness.
    const written = spawnSync(process.execPath, [BIN, 'report', '--state', state, '--out', '/proc/migrate-x'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 50_000,
    });
    expect(written.signal).toBeNull();
    expect(written.status).toBe(2);
    expect(written.stderr).toContain('--out /proc/migrate-x: cannot write the report there (ENOENT)');
  });
});
