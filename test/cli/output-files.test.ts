import { spawnSync } from 'node:child_process';
import {
  chownSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_STATES, type LedgerCounts } from '../../src/ledger/index.js';
import { PushMetrics } from '../../src/commands/push/metrics.js';
import { afterOriginLine } from '../run-origin-line.js';

// Every file migrate writes or appends (docs/operators-guide.md "Files migrate writes"): never into the export, never
// through a symbolic link planted where the file should be, never over another user's file, and a temporary renamed
// into place has a name nobody can predict. The real binary, on a copy of the sample export.

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');
/** A uid that is not this process's: a file "another user" owns (chown needs root). */
const OTHER_UID = 54_321;
const asRoot = process.getuid?.() === 0;

let dir: string;
let exportDir: string;
/** Another user's file, which a planted link points at. */
let victim: string;

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  // The time-out only ends a run that hangs (a FIFO waited on): a failure, never a wait a passing test makes.
  const run = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env },
    timeout: 120_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: afterOriginLine(run.stderr) };
}

const filesOf = (at: string): Map<string, string> =>
  new Map(readdirSync(at).map((name) => [name, readFileSync(join(at, name), 'utf8')]));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'output-files-'));
  exportDir = join(dir, 'export');
  cpSync(join(ROOT, 'fixtures', 'sample'), exportDir, { recursive: true });
  victim = join(dir, 'victim.txt');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function plantVictim(): void {
  writeFileSync(victim, 'someone else\n', { mode: 0o644 });
}

describe('files migrate writes', () => {
  it('validate --errors-csv into the export is refused, exit 2, the export untouched', () => {
    const before = filesOf(exportDir);
    const run = migrate(['validate', 'export', '--errors-csv', 'export/accounts.csv']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `migrate: --errors-csv export/accounts.csv: ${join(exportDir, 'accounts.csv')} is inside the export ` +
        `directory ${exportDir}; migrate never writes into an export directory (a file of its own could take the ` +
        'place of an export file). Give a path outside it.\n',
    );
    expect(filesOf(exportDir)).toEqual(before);
  });

  it.each([
    ['validate --errors-csv', ['validate', 'export', '--errors-csv', 'planted']],
    ['push --log-file', ['push', 'export', '--sandbox', '--state', 'state-log', '--quiet', '--log-file', 'planted']],
  ])('%s through a planted symbolic link is refused, exit 2, the linked file untouched', (flag, args) => {
    plantVictim();
    symlinkSync(victim, join(dir, 'planted'));
    try {
      const run = migrate(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `${flag.split(' ')[1]} planted: it is a symbolic link; migrate never writes through one`,
      );
      expect(readFileSync(victim, 'utf8')).toBe('someone else\n');
      expect(statSync(victim).mode & 0o777).toBe(0o644);
    } finally {
      rmSync(join(dir, 'planted'));
    }
  });

  it('validate --errors-csv on a planted FIFO is refused at once, exit 2, not waited on', () => {
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    try {
      const run = migrate(['validate', 'export', '--errors-csv', 'fifo']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--errors-csv fifo: ');
    } finally {
      rmSync(fifo);
    }
  });

  it.each([
    ['--log-file', 'export/push.ndjson'],
    ['--metrics-file', 'export/migrate.prom'],
  ])('push %s into the export is refused, exit 2, before anything is sent', (flag, file) => {
    const before = filesOf(exportDir);
    const run = migrate(['push', 'export', '--sandbox', '--state', 'state-in', '--quiet', flag, file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${flag} ${file}: ${join(dir, file)} is inside the export directory`);
    expect(filesOf(exportDir)).toEqual(before);
  });

  it.runIf(asRoot).each([
    ['validate --errors-csv', ['validate', 'export', '--errors-csv', 'theirs']],
    ['push --log-file', ['push', 'export', '--sandbox', '--state', 'state-own', '--quiet', '--log-file', 'theirs']],
    ['push --metrics-file', ['push', 'export', '--sandbox', '--state', 'state-own', '--metrics-file', 'theirs']],
  ])("%s over another user's file is refused (even as root), exit 2, the file untouched", (flag, args) => {
    const theirs = join(dir, 'theirs');
    writeFileSync(theirs, 'theirs\n', { mode: 0o644 });
    chownSync(theirs, OTHER_UID, OTHER_UID);
    try {
      const run = migrate(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `${flag.split(' ')[1]} theirs: it belongs to another user (uid ${OTHER_UID}, this run is uid 0)`,
      );
      expect(readFileSync(theirs, 'utf8')).toBe('theirs\n');
      expect(statSync(theirs).uid).toBe(OTHER_UID);
    } finally {
      rmSync(theirs);
    }
  });

  it('the metrics file is written through a temporary no one can predict: a planted link at the old name is left', async () => {
    plantVictim();
    const file = join(dir, 'migrate.prom');
    // The name the temporary had before: the process id, which anyone on the host can read.
    symlinkSync(victim, join(dir, `.migrate.prom.${process.pid}.tmp`));
    const counts: LedgerCounts = {
      accounts: Object.fromEntries(ACCOUNT_STATES.map((state) => [state, 0])),
      items: {},
    } as LedgerCounts;
    const metrics = new PushMetrics({ file, ledgerLabel: '/s', counts: () => counts, runStartedAt: 0, rate: () => 0 });
    await metrics.write();
    expect(metrics.failure).toBeUndefined();
    expect(readFileSync(file, 'utf8')).toContain('migrate_run_in_progress');
    expect(readFileSync(victim, 'utf8')).toBe('someone else\n');
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([`.migrate.prom.${process.pid}.tmp`]);
  });
});
