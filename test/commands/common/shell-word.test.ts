import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerWords, shellWord } from '../../../src/commands/common/shell-word.js';

// The values a hint names, as words a user pastes into a shell.

describe('shellWord', () => {
  it.each([
    ['/srv/migrate/cohort-1', '/srv/migrate/cohort-1'],
    ['ACME', 'ACME'],
    ['/srv/my exports', "'/srv/my exports'"],
    ["O'Brien", "'O'\\''Brien'"],
    ['$HOME', "'$HOME'"],
    ['', "''"],
  ])('%s -> %s', (value, word) => {
    expect(shellWord(value)).toBe(word);
  });
});

describe('ledgerWords', () => {
  it('names a state directory other than the default, and a PostgreSQL ledger without its password', () => {
    expect(ledgerWords({ url: undefined, stateDir: './.migrate' })).toBe('');
    // The directory made absolute, one shell word wherever the tests run (a space in the path is quoted).
    expect(ledgerWords({ url: undefined, stateDir: 'st' })).toBe(` --state ${shellWord(resolve('st'))}`);
    expect(ledgerWords({ url: 'postgresql://migrate:secret@db:5432/acme', stateDir: './.migrate' })).toBe(
      // The stars of the hidden password quoted: a shell would read them as a pattern.
      " --ledger 'postgresql://migrate:***@db:5432/acme'",
    );
  });
});
