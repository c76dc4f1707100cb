import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { errnoOf, FatalError, messageOf } from '../../errors.js';
import { newClient } from './url.js';

// A command's first connection to the ledger's database (docs/postgres.md "A database that cannot be reached at the
// start"). Before it has answered once, nothing was opened, staged or sent: a host that refuses, drops the packets or
// does not resolve is a mistake in --ledger or a server that is down, not an outage to wait out for --ledger-timeout.
// So the first connection waits a few seconds at most, tries a refused connection a couple of times (a server
// restarting), and then stops the command with what happened and where.

/** How long the first connection waits for the server's answer unless the URL's `connect_timeout` says otherwise. */
export const FIRST_CONNECT_SECONDS = 5;
/** Tries of a refused connection (or a server still starting) before the command stops, and the pause after each. */
const REFUSED_TRIES = 3;
const REFUSED_PAUSE_MS = 300;

/** Where a command's ledger URL comes from. */
const LEDGER_FLAGS = '--ledger (or MIGRATE_LEDGER_URL)';

/** The database cannot be reached or refuses the connection at the start: exit 3; nothing was opened or sent. */
export class PostgresLedgerUnavailableError extends FatalError {
  /** `given`: where the URL came from, for what to check. */
  constructor(label: string, what: string, cause: unknown, given = LEDGER_FLAGS) {
    super(
      `cannot open the PostgreSQL ledger ${label}: ${what}. The ledger was never opened: nothing was recorded or ` +
        `sent. Check ${given}: the host, the port and the database, and that the database server runs and accepts ` +
        'connections from this machine; then run the command again.',
      'ledger_unavailable',
      cause,
    );
  }
}

/** libpq's `connect_timeout` (seconds) in the URL's query, as psql reads it; otherwise FIRST_CONNECT_SECONDS. */
export function firstConnectSeconds(url: string): number {
  const given = /[?&]connect_timeout=(\d{1,6})(?:&|#|$)/i.exec(url)?.[1];
  const seconds = given === undefined ? 0 : Number(given);
  return seconds > 0 ? seconds : FIRST_CONNECT_SECONDS;
}

/**
 * A connected client of the database at `url`, or PostgresLedgerUnavailableError saying what happened: refused, no
 * answer within the connect time-out, a host name that does not resolve, or the server's own refusal (a wrong password,
 * an unknown database), never the password itself.
 */
export async function firstContact(url: string, label: string, given = LEDGER_FLAGS): Promise<pg.Client> {
  const seconds = firstConnectSeconds(url);
  for (let tried = 1; ; tried++) {
    const client = newClient(url, seconds * 1000);
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      const again = worthAnotherTry(error) && tried < REFUSED_TRIES;
      if (!again)
        throw new PostgresLedgerUnavailableError(label, whatHappened(error, client, seconds, tried), error, given);
      await sleep(REFUSED_PAUSE_MS * tried);
    }
  }
}

/**
 * A refused connection, a name server that could not answer now (EAI_AGAIN), a server that says it is starting or
 * shutting down (57P03, 57P01), or one that has too many connections right now (53300: several runners starting).
 */
const TRIED_AGAIN: ReadonlySet<unknown> = new Set(['ECONNREFUSED', 'EAI_AGAIN', '57P03', '57P01', '53300']);

function worthAnotherTry(error: unknown): boolean {
  return TRIED_AGAIN.has(errnoOf(error));
}

/** Where the client went: host:port, or the unix socket's directory and port. */
function whereTo(client: pg.Client): string {
  const { host, port } = client;
  return host.startsWith('/') ? `the socket ${host}/.s.PGSQL.${port}` : `${host}:${port}`;
}

/** What happened to the first connection, in the operator's words. */
export function whatHappened(error: unknown, client: pg.Client, seconds: number, tried: number): string {
  const where = whereTo(client);
  const code = errnoOf(error);
  const message = messageOf(error);
  const tries = tried > 1 ? `, ${tried} tries` : '';
  switch (code) {
    case 'ECONNREFUSED':
      return `${where} refused the connection${tries} (nothing listens on that port, or a firewall rejects it)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${client.host} does not resolve (DNS: ${code}${tries})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} cannot be reached: no route to the host (${code})`;
    case 'ENOENT':
      return `no server listens at ${where} (${code})`;
    case '57P03':
    case '57P01':
      return `the server at ${where} is starting or shutting down${tries} (${message})`;
    case '53300':
      return (
        `the server at ${where} has too many connections${tries} (${message}): raise its max_connections, or ` +
        'start fewer runners'
      );
  }
  if (/timeout expired|connection timeout/i.test(message))
    return (
      `${where} did not answer within ${seconds} s (a firewall dropping the packets, a wrong host or port, or a ` +
      "server that is down; the URL's connect_timeout sets this wait)"
    );
  if (/Connection terminated|ECONNRESET/i.test(message) || code === 'ECONNRESET')
    return `${where} closed the connection before answering as PostgreSQL (${message})`;
  return `the server at ${where} refused: ${message}`;
}
