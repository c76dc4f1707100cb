import pg from 'pg';
import { shownUrl } from '../../shown-url.js';

/** True for a ledger given as a PostgreSQL connection URL rather than a state directory. */
export function isPostgresUrl(value: string | undefined): value is string {
  return value !== undefined && /^postgres(ql)?:\/\//i.test(value);
}

/**
 * The ledger's URL as it may be shown: the password replaced by `***` (also a `password=` or `sslpassword=` query
 * parameter). Every message, log line, report and run record that names the ledger uses this form, never the URL as
 * given.
 */
export const redactUrl = (url: string): string => shownUrl(url, 'ledger');

/** BIGINT and NUMERIC COUNT(*) come back as numbers: every id, count and millisecond time fits in 2^53. */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700
      ? (value: string): number => Number(value)
      : (pg.types.getTypeParser(oid, format) as (value: string) => unknown),
};

/**
 * A client of the ledger's database (TLS and the rest from the URL's own parameters, e.g. sslmode) that waits at most
 * `connectMs` for the server to answer a new connection.
 */
export function newClient(url: string, connectMs = 10_000): pg.Client {
  const client = new pg.Client({ connectionString: url, types, connectionTimeoutMillis: connectMs });
  // A dropped connection is reported by the next query; unhandled, the event would end the process.
  client.on('error', () => undefined);
  return client;
}

/** True when the client can read the URL (it parses it when a client is made, before any connection). */
export function clientReads(url: string): boolean {
  try {
    newClient(url);
    return true;
  } catch {
    return false;
  }
}
