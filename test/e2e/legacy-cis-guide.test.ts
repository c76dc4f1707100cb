import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';
import { runMigrate } from './run-push.js';

// docs/from-a-legacy-system.md: every `migrate` command of its shell blocks runs as written (from the
// repository's root, as the page says), in the page's order, and succeeds. Only its /tmp/ directories are moved into
// a directory of this test's own, so that runs never meet.

const PAGE = join(ROOT, 'docs', 'from-a-legacy-system.md');

/** The page's commands, in order: every line of a ```sh block. */
function commands(): string[] {
  const blocks = [...readFileSync(PAGE, 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks.flatMap((block) => block.split('\n').filter((line) => line.trim() !== ''));
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'legacy-guide-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('docs/from-a-legacy-system.md', () => {
  it('has the loop: preview, validate, shape, push and report', () => {
    const verbs = commands().map((line) => line.split(' ').slice(0, 2).join(' '));
    expect(verbs).toEqual(['migrate validate', 'migrate validate', 'migrate shape', 'migrate push', 'migrate report']);
  });

  it('runs every command as written, each exit 0; the preview shows the legacy rows and the inverted sign', async () => {
    const outputs: string[] = [];
    for (const line of commands()) {
      const args = line
        .replace(/^migrate /, '')
        .replaceAll('/tmp/', `${root}/`)
        .split(' ');
      const result = await runMigrate(args);
      expect(result.code, `${line}\n${result.stderr}`).toBe(0);
      outputs.push(result.stdout + result.stderr);
    }
    // The preview of 00179491: its two supply point rows as the CIS wrote them, and the balance as it will be sent.
    expect(outputs[0]).toContain('THISTLE_CIS_ACCOUNTS_20261126.csv:159');
    expect(outputs[0]).toContain('THISTLE_CIS_ACCOUNTS_20261126.csv:298');
    expect(outputs[0]).toContain('+15423');
    expect(outputs[0]).toContain('-154.23');
    expect(outputs[3]).toContain('everything done');
  });
});
