// Which accounts a run takes (push --accounts): a list given on the command line, or a file of them.

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';

/** --accounts A,B,C or --accounts @file (one external account number per line; blank lines and # comments skipped). */
export async function readAccountList(value: string, cwd: string): Promise<ReadonlySet<string>> {
  const file = value.startsWith('@') ? value.slice(1) : undefined;
  const text =
    file === undefined
      ? undefined
      : await readFile(resolve(cwd, file), 'utf8').catch((error: NodeJS.ErrnoException) => {
          throw new UsageError(
            `--accounts @${file}: cannot read the file (${error.code ?? 'error'}); give a file with one external ` +
              'account number per line',
            'accounts_file_unreadable',
          );
        });
  const items =
    text === undefined
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '')
      : text
          .split(/\r?\n/)
          .map((line) => line.trim())
          .filter((line) => line !== '' && !line.startsWith('#'));
  if (items.length === 0)
    throw new UsageError(`--accounts ${value}: no external account number given`, 'accounts_empty');
  return new Set(items);
}
