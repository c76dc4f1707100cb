import { describe, expect, it } from 'vitest';
import type { AccountRow, AccountState } from '../../../src/ledger/index.js';
import type { V2Status } from '../../../src/schema/index.js';
import { accountRow } from '../../ledger/helpers/account-row.js';
import { isErrored, joinRow, mismatchOf, type ServiceListing } from '../../../src/commands/status/status-join.js';

const row = (state: AccountState, extra: Partial<AccountRow> = {}): AccountRow =>
  accountRow({ externalAccountNumber: 'N-1', state, createdAt: 't', updatedAt: 't', ...extra });

describe('ledger against service', () => {
  const cases: Array<[AccountState | null, ServiceListing | null, V2Status | null, string | null]> = [
    ['done', 'imported', null, null],
    ['done', 'absent', null, 'only_in_ledger'],
    ['scheduled', 'absent', null, 'only_in_ledger'],
    ['errored', 'absent', null, 'only_in_ledger'],
    // Not sent yet (or held back): the service is right not to know it.
    ['staged', 'absent', null, null],
    ['invalid', 'absent', null, null],
    ['creating', 'absent', null, null],
    [null, 'imported', null, 'only_on_service'],
    [null, 'pending', null, 'only_on_service'],
    ['done', 'pending', 'ERRORED', 'differs'],
    ['errored', 'imported', null, 'differs'],
    ['errored', 'pending', 'ERRORED', null],
    ['scheduled', 'imported', null, null],
    ['done', null, null, null],
  ];
  it.each(cases)('ledger %s, service list %s, v2 %s -> %s', (state, listing, v2, expected) => {
    expect(mismatchOf(state, listing, v2)).toBe(expected);
  });
});

describe('one account row', () => {
  it('the two platform account numbers differ: a disagreement, with both numbers', () => {
    const joined = joinRow({
      supplier: 'ACME',
      externalAccountNumber: 'N-1',
      account: row('done', { platformAccountNumber: 'A-00000002' }),
      entry: { platformAccountNumber: 'A-00000001', pending: false },
      online: true,
      v2: undefined,
    });
    expect(joined).toMatchObject({
      mismatch: 'differs',
      platform_account_number: 'A-00000001',
      ledger_platform_account_number: 'A-00000002',
    });
    const same = joinRow({
      supplier: 'ACME',
      externalAccountNumber: 'N-1',
      account: row('done', { platformAccountNumber: 'A-00000001' }),
      entry: { platformAccountNumber: 'A-00000001', pending: false },
      online: true,
      v2: undefined,
    });
    expect(same.mismatch).toBeNull();
    expect(same).not.toHaveProperty('ledger_platform_account_number');
  });

  it("takes the service's platform account number over the ledger's, and v2's latest_error", () => {
    const joined = joinRow({
      supplier: 'ACME',
      externalAccountNumber: 'N-1',
      account: row('errored', { platformAccountNumber: null, error: { code: 'old', detail: 'old' } }),
      entry: { platformAccountNumber: null, pending: true },
      online: true,
      v2: {
        status: 'ERRORED',
        platform_identifier: null,
        created_at: 'c',
        modified_at: 'm',
        latest_error: { code: 'account_creation_failed', detail: 'no', domain: 'import_process' },
      },
    });
    expect(joined).toEqual({
      import_supplier: 'ACME',
      external_account_number: 'N-1',
      state: 'errored',
      service: 'pending',
      service_status: 'ERRORED',
      platform_account_number: null,
      latest_error: { code: 'account_creation_failed', detail: 'no' },
      mismatch: null,
    });
    expect(isErrored(joined)).toBe(true);
  });

  it('offline: the ledger alone, no service columns, the ledger error of an errored account', () => {
    const joined = joinRow({
      supplier: 'ACME',
      externalAccountNumber: 'N-1',
      account: row('errored', { platformAccountNumber: 'A-9', error: { code: 'e', detail: 'd' } }),
      entry: undefined,
      online: false,
      v2: undefined,
    });
    expect(joined).toMatchObject({
      service: null,
      service_status: null,
      platform_account_number: 'A-9',
      latest_error: { code: 'e', detail: 'd' },
      mismatch: null,
    });
    expect(isErrored(joined)).toBe(true);
    const done = joinRow({
      supplier: 'ACME',
      externalAccountNumber: 'N-2',
      account: row('done', { platformAccountNumber: 'A-8' }),
      entry: { platformAccountNumber: 'A-7', pending: false },
      online: true,
      v2: undefined,
    });
    expect(done).toMatchObject({ service: 'imported', platform_account_number: 'A-7', latest_error: null });
    expect(isErrored(done)).toBe(false);
  });
});
