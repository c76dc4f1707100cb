import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SAMPLE_PERIOD_FLAGS } from './helpers.js';
import { SAMPLE_EXPORT } from './run-push.js';
import { onTerminal } from './terminal.js';

// push's progress bars as a terminal shows them once the push is over: every bar at its end, the export's included
// (its last frame while reading, "11 accounts so far", stayed on the screen after the whole export was read).

const root = mkdtempSync(join(tmpdir(), 'push-terminal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'migrate.js');
const FULL = '█'.repeat(24);

/** A word for bash, whatever the checkout's path holds. */
const word = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

describe('push on a terminal', () => {
  it('leaves every bar at its end: the export read whole, each step done', () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIGRATE_')));
    const command = [process.execPath, BIN, 'push', SAMPLE_EXPORT, '--sandbox', ...SAMPLE_PERIOD_FLAGS];
    const state = ['--state', join(root, 'state')];
    const { screen, status } = onTerminal([...command, ...state].map(word).join(' '), root, env);
    expect(status, screen).toBe(0);
    const bars = new Map(
      [...screen.matchAll(/^ ([\w. ]+?) +\|([█░·]+)\| (.*)$/gm)].map(([, label, gauge, count]) => [
        label,
        { gauge, count },
      ]),
    );
    expect(bars.get('export read'), screen).toEqual({ gauge: FULL, count: '50 accounts' });
    for (const [step, count] of [
      ['created', '50/50'],
      ['processed', '50/50'],
      ['notes', '32/32'],
      ['transactions', '80/80'],
      ['statements', '26/26'],
      ['payment instr.', '17/17'],
    ])
      expect(bars.get(step ?? ''), screen).toEqual({ gauge: FULL, count });
  });
});
