import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onTerminal } from '../e2e/terminal.js';

// docs/tour.md run as a newcomer runs it: in a copy of the checkout after the README's set-up (`npm ci && ...`: its
// install is this checkout's node_modules and dist/, linked), every command of the tour in order, each in its own
// shell on a terminal of its own (script(1) gives it one), and what the terminal shows at its end compared with the
// output the tour shows under it: stdout and stderr as they reach the screen (the first line, on stderr, saying the
// run configuration and the service; warnings), in the order written, a progress line cleared as the command clears
// it.
//
// The tour's convention: a ```console block holds commands after a `$ ` prompt, each followed by what the terminal
// shows. A command ending in `# exit N` exits N; any other exits 0. Only the parts `variableParts` lists may differ, and
// the tour writes them as placeholders (`<time>`, `<progress bars>` for push's bars, drawn as the run goes);
// trailing spaces and blank lines at the end of an output are not compared.
//
// After a change to what the commands print, refresh the tour's outputs from the tool and read the diff:
//   TOUR_REFRESH=1 npx vitest run test/docs/tour.test.ts
// (it rewrites docs/tour.md's outputs, the variable parts as placeholders, then compares as always).

const root = join(import.meta.dirname, '..', '..');
const TOUR = join(root, 'docs', 'tour.md');

/** What differs from run to run, as the tour writes it. `checkout` is the copy's directory. */
function variableParts(checkout: string): ReadonlyArray<readonly [RegExp, string]> {
  return [
    [new RegExp(checkout.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g'), '<checkout>'],
    [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<time>'],
    // push's summary headline: `(1.2s, 40.4 accounts/s)`.
    [/\(\d+(?:\.\d+)?s(?=[,)])/g, '(<duration>'],
    [/\d+(?:\.\d+)?(?= accounts(?: created)?\/s)/g, '<rate>'],
    [/\b(127\.0\.0\.1|localhost):\d+/g, '$1:<port>'],
    // push's bars on a terminal, one a step, and the blank line below them: how many are drawn, and their last
    // numbers, depend on the moment of each redraw (every 200 ms).
    [/^(?: [\w. ]+\|[█░·]+\|.*\n|\n)+(?=push )/gm, '<progress bars>\n\n'],
  ];
}

interface Step {
  command: string;
  exit: number;
  shown: string;
}

interface Block {
  start: number;
  end: number;
  steps: Step[];
}

/** The tour's ```console blocks, each with its place in the text (for the refresh) and its steps. */
function blocksOf(markdown: string): Block[] {
  return [...markdown.matchAll(/^```console\n([\s\S]*?)^```$/gm)].map((match) => {
    const start = match.index + '```console\n'.length;
    const steps: Step[] = [];
    for (const line of (match[1] ?? '').split('\n').slice(0, -1)) {
      if (line.startsWith('$ ')) {
        const command = line.slice(2);
        steps.push({ command, exit: Number(/#\s*exit (\d+)\s*$/.exec(command)?.[1] ?? 0), shown: '' });
      } else {
        const step = steps.at(-1);
        if (step === undefined) throw new Error(`docs/tour.md: output before any "$ " command: ${line}`);
        step.shown += `${line}\n`;
      }
    }
    return { start, end: start + (match[1] ?? '').length, steps };
  });
}

/** Output as compared: trailing spaces and blank lines dropped. */
const comparable = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd();

const lines = (text: string): string => (text === '' ? '' : `${text}\n`);

/** A fresh checkout: the files git tracks (as this working tree has them), with the install's node_modules and dist/. */
function freshCheckout(): string {
  const checkout = realpathSync(mkdtempSync(join(tmpdir(), 'tour-')));
  const listed = spawnSync('git', ['ls-files', '-z', '--cached'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(listed.status, listed.stderr).toBe(0);
  for (const file of listed.stdout.split('\0')) {
    if (file === '' || !existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    copyFileSync(join(root, file), join(checkout, file));
  }
  for (const built of ['node_modules', 'dist']) symlinkSync(join(root, built), join(checkout, built));
  return checkout;
}

/**
 * The environment of a newcomer's terminal: no MIGRATE_ setting, no NO_COLOR (colours are drawn, and dropped from the
 * comparison); and a day of the month the sample export is dated in (sample-month-clock.mjs), so that the output does
 * not depend on the day.
 */
function terminalEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('MIGRATE_') && name !== 'NO_COLOR'),
  );
  const clock = join(import.meta.dirname, 'sample-month-clock.mjs');
  const nodeOptions = `${env['NODE_OPTIONS'] ?? ''} --import ${pathToFileURL(clock).href}`.trim();
  // Its own day, whatever instant a run of the whole suite may have moved the clock to.
  return { ...env, NODE_OPTIONS: nodeOptions, SHELL: '/bin/bash', SAMPLE_MONTH_NOW: '2026-11-23T12:00:00Z' };
}

/** The README's set-up: its first shell block begins `npm ci && ...`; npm ci is the copy's linked install. */
function readmeSetUp(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(readme)?.[1] ?? '';
  const first = block.split('\n').find((line) => line.trim() !== '' && !line.startsWith('#')) ?? '';
  expect(first, "the README's set-up").toMatch(/^npm ci\b/);
  const rest = first.replace(/^npm ci\s*(&&\s*)?/, '');
  return rest === '' ? [] : [rest];
}

let checkout = '';
beforeAll(() => {
  checkout = freshCheckout();
});
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

describe('docs/tour.md, run as written', () => {
  it("every command prints what the tour shows, after the README's set-up", () => {
    for (const command of readmeSetUp()) {
      const setUp = spawnSync('bash', ['-c', command], { cwd: checkout, env: terminalEnv(), encoding: 'utf8' });
      expect(setUp.status, `${command}\n${setUp.stderr}`).toBe(0);
    }
    const markdown = readFileSync(TOUR, 'utf8');
    const blocks = blocksOf(markdown);
    expect(blocks.flatMap((block) => block.steps).length).toBeGreaterThanOrEqual(5);
    const parts = variableParts(checkout);
    const printed = blocks.map((block) =>
      block.steps.map((step) => {
        const result = onTerminal(step.command, checkout, terminalEnv());
        expect(result.status, `${step.command}\n${result.screen}`).toBe(step.exit);
        return { ...step, printed: parts.reduce((text, [pattern, as]) => text.replace(pattern, as), result.screen) };
      }),
    );
    if (process.env['TOUR_REFRESH'] === '1') {
      let refreshed = markdown;
      for (const [index, block] of [...blocks.entries()].reverse()) {
        const text = printed[index]!.map((step) => `$ ${step.command}\n${lines(comparable(step.printed))}`).join('\n');
        refreshed = refreshed.slice(0, block.start) + text + refreshed.slice(block.end);
      }
      writeFileSync(TOUR, refreshed);
    }
    const shown = blocksOf(readFileSync(TOUR, 'utf8')).flatMap((block) => block.steps);
    printed.flat().forEach((step, index) => {
      expect(comparable(step.printed), step.command).toBe(comparable(shown[index]?.shown ?? ''));
    });
  });
});
