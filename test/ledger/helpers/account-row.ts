import type { AccountRow } from '../../../src/ledger/index.js';

/** A ledger account row for unit tests: a staged account of supplier ACME, nothing sent yet; `overrides` on top. */
export function accountRow(overrides: Partial<AccountRow> = {}): AccountRow {
  return {
    id: 1,
    importSupplier: 'ACME',
    externalAccountNumber: 'A-1',
    state: 'staged',
    payload: '{}',
    fingerprint: 'f',
    sentFingerprint: null,
    changedFingerprint: null,
    originFile: 'accounts.csv',
    originLine: 2,
    origins: null,
    platformAccountNumber: null,
    platformIdentifier: null,
    attempts: 0,
    polls: 0,
    nextCheckAt: null,
    error: null,
    lastRunId: 1,
    createdAt: '',
    updatedAt: '',
    ...overrides,
  };
}
