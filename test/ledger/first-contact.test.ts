import { describe, expect, it } from 'vitest';
import { FIRST_CONNECT_SECONDS, firstConnectSeconds } from '../../src/ledger/postgres/first-contact.js';

// How long a command's first connection to the PostgreSQL ledger waits (docs/postgres.md "A database that cannot be
// reached at the start"): libpq's connect_timeout in the URL, else a few seconds, never --ledger-timeout.
describe("the first connection's wait", () => {
  it.each([
    ['postgresql://migrate@db/acme', FIRST_CONNECT_SECONDS],
    ['postgresql://migrate@db/acme?connect_timeout=15', 15],
    ['postgresql://migrate@db/acme?sslmode=require&connect_timeout=2&application_name=x', 2],
    ['postgresql://migrate@db/acme?connect_timeout=0', FIRST_CONNECT_SECONDS],
    ['postgresql://migrate@db/acme?connect_timeout=soon', FIRST_CONNECT_SECONDS],
    ['postgresql://migrate@db/acme?my_connect_timeout=9', FIRST_CONNECT_SECONDS],
  ])('%s: %i s', (url, seconds) => {
    expect(firstConnectSeconds(url)).toBe(seconds);
  });

  it('is a few seconds by default', () => {
    expect(FIRST_CONNECT_SECONDS).toBeLessThanOrEqual(10);
  });
});
