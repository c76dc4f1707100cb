import { UsageError } from '../errors.js';
import { isPostgresUrl, redactUrl } from '../ledger/postgres/index.js';

/** The environment variable naming the PostgreSQL ledger when --ledger is not given. */
export const LEDGER_URL_ENV = 'MIGRATE_LEDGER_URL';

/**
 * The PostgreSQL ledger of a command (--ledger, else MIGRATE_LEDGER_URL), or undefined for a state directory's SQLite
 * ledger. Anything but a postgres:// or postgresql:// URL is exit 2, and the message never repeats the password.
 */
export function ledgerUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const value = flag ?? env[LEDGER_URL_ENV];
  if (value === undefined || value === '') return undefined;
  if (!isPostgresUrl(value))
    throw new UsageError(
      `${flag === undefined ? LEDGER_URL_ENV : '--ledger'} ${redactUrl(value)}: not a PostgreSQL URL; give ` +
        'postgresql://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or a .pgpass file), or leave it out ' +
        'for the SQLite ledger of --state',
      'ledger_url_invalid',
    );
  return value;
}
