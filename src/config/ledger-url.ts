import { UsageError } from '../errors.js';
import { settingOf, SETTING_ENV } from './precedence.js';
import { clientReads, isPostgresUrl, redactUrl } from '../ledger/postgres/index.js';
import { holdsPassword } from '../shown-url.js';

/** The environment variable naming the PostgreSQL ledger when --ledger is not given. */
const LEDGER_URL_ENV = SETTING_ENV.ledger;

/**
 * The PostgreSQL ledger of a command (--ledger, else MIGRATE_LEDGER_URL), or undefined for a state directory's SQLite
 * ledger. Anything but a postgres:// or postgresql:// URL is exit 2, and the message never repeats the password. A
 * password in the flag's URL is exit 2 too: a command line is readable by every user of the host (`ps`, /proc) for
 * the whole run, as an API key would be (docs/postgres.md, "The password").
 */
export function ledgerUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv, name = '--ledger'): string | undefined {
  const value = settingOf('ledger', flag, env);
  if (value === undefined) return undefined;
  if (!isPostgresUrl(value))
    throw new UsageError(
      `${flag === undefined ? LEDGER_URL_ENV : name} ${redactUrl(value)}: not a PostgreSQL URL; give ` +
        'postgresql://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or a .pgpass file), or leave it out ' +
        'for the SQLite ledger of --state',
      'ledger_url_invalid',
    );
  if (!clientReads(value))
    throw new UsageError(
      `${flag === undefined ? LEDGER_URL_ENV : name} ${redactUrl(value)}: the PostgreSQL client cannot read this URL ` +
        '(a port that is no number, or a character such as / ? # @ in the user name or password that must be ' +
        'percent-encoded, e.g. %2F for /); give postgresql://USER@HOST:PORT/DATABASE',
      'ledger_url_invalid',
    );
  if (flag !== undefined && holdsPassword(flag))
    throw new UsageError(
      `${name} ${redactUrl(flag)}: a password on the command line can be read by every user of this host (ps) for ` +
        `the whole run; give it in PGPASSWORD or a pgpass file (~/.pgpass, or PGPASSFILE) and leave it out of the ` +
        `URL, or give the whole URL in ${LEDGER_URL_ENV} instead of ${name}.`,
      'ledger_password_in_argv',
    );
  return value;
}
