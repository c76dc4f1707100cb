import { spawnSync } from 'node:child_process';

// A command run as a person runs it at a terminal (script(1), from util-linux, gives it one), and the screen it leaves.

/**
 * The text a terminal shows once `output` (what a program wrote to it) is drawn: colours dropped, carriage returns,
 * cursor moves, saves and restores and erasures applied as the progress bars use them; lines never wrap.
 */
export function screenOf(output: string): string {
  const lines = [''];
  let row = 0;
  let column = 0;
  let saved: [number, number] = [0, 0];
  /** Blanks columns from..to of the cursor's line (to the end: cut). */
  const erase = (from: number, to: number): void => {
    const line = lines[row] ?? '';
    lines[row] =
      to >= line.length ? line.slice(0, from) : `${line.slice(0, from)}${' '.repeat(to - from)}${line.slice(to)}`;
  };
  /** CSI sequences: cursor up, down, to a column; erase in line (K) and below (J); the rest (colours) draw nothing. */
  const control = (command: string, argument: string): void => {
    const n = Number(argument === '' ? 1 : argument);
    if (command === 'A') row = Math.max(0, row - n);
    if (command === 'B') row += n;
    if (command === 'G') column = n - 1;
    if (command === 'K')
      erase(argument === '' || argument === '0' ? column : 0, argument === '1' ? column + 1 : Infinity);
    if (command === 'J' && (argument === '' || argument === '0')) {
      erase(column, Infinity);
      lines.length = row + 1;
    }
  };
  for (const [all, argument, command] of output.matchAll(
    /\x1b\[([?\d;]*)([A-Za-z])|\x1b[78]|\x1b[()][A-Z0-9]|[\s\S]/gu,
  )) {
    if (command !== undefined) control(command, argument ?? '');
    else if (all === '\x1b7') saved = [row, column];
    else if (all === '\x1b8') [row, column] = saved;
    else if (all === '\r') column = 0;
    else if (all === '\n') row += 1;
    else if (!all.startsWith('\x1b')) {
      const line = (lines[row] ?? '').padEnd(column);
      lines[row] = `${line.slice(0, column)}${all}${line.slice(column + 1)}`;
      column += 1;
    }
    while (lines.length <= row) lines.push('');
  }
  return lines.map((line) => line.trimEnd()).join('\n');
}

/** `command` in bash on a terminal 120 columns wide: its exit code and the screen it leaves (stdout and stderr). */
export function onTerminal(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): { screen: string; status: number | null } {
  const shown = spawnSync('script', ['-qefc', `stty cols 120 rows 50; ${command}`, '/dev/null'], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { screen: screenOf(shown.stdout), status: shown.status };
}
