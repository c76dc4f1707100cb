import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { copyLegacyCis, FILES, plant } from './legacy-cis-files.js';
import { runMigrate } from './run-push.js';

// A file name or value is printed with its control characters escaped, line breaks included (docs/operators-guide.md
// "What reaches your terminal"): a legacy file named with a line break cannot forge a line of the tool's output, such
// as a stamped "push finished: everything done", in validate's report, push's summary or `status --account`.

const FORGED = '2026-11-28 run 7 push finished: everything done';
const NOTES = `THISTLE_NOTES_EXPORT_a\n${FORGED}.csv`;
/** The account whose note (line 32 of the notes file) holds a time that occurs twice: reported at its file. */
const ACCOUNT = '00009243';

let root: string;
let dir: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'forged-lines-'));
  dir = copyLegacyCis(join(root, 'export'));
  plant(dir, FILES.notes, 32, 'Note Date', '25/10/2026 01:30');
  renameSync(join(dir, FILES.notes), join(dir, NOTES));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** No line of the output starts with the forged text: the name's line break was shown as \n. */
function expectNoForgedLine(output: string): void {
  expect(output.split('\n').filter((line) => line.includes(FORGED) && !line.includes('\\n'))).toEqual([]);
}

describe('a legacy file named with a line break', () => {
  it("validate's report shows the name on one line, its line break as \\n", async () => {
    const result = await runMigrate(['validate', dir]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stdout).toContain(`THISTLE_NOTES_EXPORT_a\\n${FORGED}.csv:`);
    expectNoForgedLine(result.stdout);
    expectNoForgedLine(result.stderr);
  });

  it('validate --show too', async () => {
    const result = await runMigrate(['validate', dir, '--show', ACCOUNT]);
    expect(result.stdout).toContain(`THISTLE_NOTES_EXPORT_a\\n${FORGED}.csv:`);
    expectNoForgedLine(result.stdout);
  });

  it("push's summary and status --account show it on one line", async () => {
    sandbox = await startSandbox({ suppliers: { THISTLE: 'Ongoing' }, processingMs: 0 });
    const state = join(root, 'state');
    const run = await push(sandbox, dir, state);
    expect(run.code, run.stderr).toBe(5);
    expectNoForgedLine(run.stdout);
    expectNoForgedLine(run.stderr);
    const status = await runMigrate(['status', 'THISTLE', '--state', state, '--offline', '--account', ACCOUNT]);
    expect(status.stdout).toContain(`THISTLE_NOTES_EXPORT_a\\n${FORGED}.csv:`);
    expectNoForgedLine(status.stdout);
    expectNoForgedLine(status.stderr);
  });
});
