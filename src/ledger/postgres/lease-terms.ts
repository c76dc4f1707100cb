import { FatalError } from '../../errors.js';

// The terms of a shared ledger's leases (coordinator.ts), shared by the files that take, renew and check them.

/** How long a lease (and the stage lock) lives unless its holder renews it. */
export const LEASE_TTL_MS = 30_000;

/** A runner's write refused: another runner took over an account it held (it stalled past its lease), or the lock:
 * exit 3. */
export class LeaseLostError extends FatalError {
  constructor(label: string, what: string) {
    super(
      `the PostgreSQL ledger ${label}: ${what} was taken over by another runner (this one could not renew it in ` +
        `${LEASE_TTL_MS / 1000} s); this runner stopped. Nothing it had not recorded was sent; the other runner ` +
        'goes on.',
      'ledger_unreachable',
    );
  }
}

/**
 * What a lease brought: rows of the leased accounts (SQLite columns); `staging`: a runner is staging (more to come).
 */
export interface LeasedPage {
  staging: boolean;
  accounts: unknown[][];
  items: unknown[][];
  issues: unknown[][];
}

export interface Columns {
  accounts: string[];
  items: string[];
  issues: string[];
}
