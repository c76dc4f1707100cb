import { resolve } from 'node:path';
import { RUN_DEFAULTS } from '../../defaults.js';
import { redactUrl } from '../../ledger/postgres/index.js';

// What a hint prints where the tool knows the value (`next: migrate status ACME --state /srv/acme`), as words a user
// can paste into a shell.

/** What the hints name where the tool knows it: the last push's export directory, the flag that reads this ledger. */
export interface KnownValues {
  /** The export directory the last push read, as recorded with it. */
  exportDir?: string | undefined;
  /** ` --state DIR` or ` --ledger URL` (shell words), or nothing for the default state directory. */
  ledgerWords?: string;
}

/** A value as one shell word: as it is when it holds only characters no shell reads, else in single quotes. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The flag a later command needs to read the same ledger: ` --ledger URL` (without its password) for a PostgreSQL
 * ledger, ` --state DIR` for a state directory other than the default, else nothing.
 */
export function ledgerWords(ledger: { url: string | undefined; stateDir: string }): string {
  if (ledger.url !== undefined) return ` --ledger ${shellWord(redactUrl(ledger.url))}`;
  const stateDir = resolve(ledger.stateDir);
  return stateDir === resolve(RUN_DEFAULTS.stateDir) ? '' : ` --state ${shellWord(stateDir)}`;
}
