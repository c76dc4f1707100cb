import { describe, expect, it } from 'vitest';
import type { AccountRow } from '../../src/ledger/index.js';
import {
  afterCreate,
  afterListedImported,
  afterPollTransferStatus,
  afterStatus,
  afterTransferStatus,
} from '../../src/engine/transitions.js';
import type { V2StatusRecord } from '../../src/schema/index.js';
import { accountRow } from '../ledger/helpers/account-row.js';

const schedule = { firstDelayMs: 1000, factor: 2, maxDelayMs: 8000, jitter: 0 };
const clock = { now: 1_000_000, random: 0.5 };

function account(overrides: Partial<AccountRow> = {}): AccountRow {
  return accountRow({ state: 'creating', fingerprint: 'f1', attempts: 1, ...overrides });
}

function status(value: V2StatusRecord['status'], extra: Partial<V2StatusRecord> = {}): V2StatusRecord {
  return { status: value, platform_identifier: null, created_at: 'x', modified_at: 'x', latest_error: null, ...extra };
}

describe('afterCreate', () => {
  it.each([
    [{ kind: 'scheduled' } as const, 'scheduled'],
    [{ kind: 'in_progress', detail: 'x' } as const, 'scheduled'],
    [{ kind: 'already_imported', platformAccountNumber: 'P-9' } as const, 'processed'],
    [{ kind: 'invalid', error: { code: 'invalid_phone_number', detail: 'x' } } as const, 'invalid'],
    [{ kind: 'unsettled', error: { code: 'connection_reset', detail: 'x' } } as const, 'creating'],
  ])('%o -> %s', (result, state) => {
    expect(afterCreate(account(), result, clock, schedule).patch.state).toBe(state);
  });

  it('schedules the first check after the first delay and records what was sent', () => {
    const { patch } = afterCreate(account(), { kind: 'scheduled' }, clock, schedule);
    expect(patch).toMatchObject({ nextCheckAt: clock.now + 1000, sentFingerprint: 'f1', error: null });
  });

  it('adopts the account number of an account imported before', () => {
    expect(
      afterCreate(account(), { kind: 'already_imported', platformAccountNumber: 'P-9' }, clock, schedule).patch
        .platformAccountNumber,
    ).toBe('P-9');
  });
});

describe('afterStatus', () => {
  it.each([
    ['creating', null, 'staged'],
    ['scheduled', null, 'scheduled'],
    ['creating', 'PENDING', 'scheduled'],
    ['scheduled', 'IN_PROGRESS', 'scheduled'],
    ['scheduled', 'PROCESSED', 'processed'],
    ['creating', 'PROCESSED', 'processed'],
    ['scheduled', 'ERRORED', 'errored'],
    ['scheduled', 'CANCELLED', 'errored'],
    ['scheduled', 'DRY_RUN_ERRORED', 'errored'],
    // A word the spec does not give (the enum may grow, spec "Versioning"): not finished, asked again.
    ['scheduled', 'WAITING', 'scheduled'],
    ['creating', 'QUEUED_FOR_REVIEW', 'scheduled'],
  ] as const)('%s + %s -> %s', (from, answer, to) => {
    const record = answer === null ? null : status(answer, { platform_identifier: 'K-1' });
    const result = afterStatus(account({ state: from }), record, clock, schedule);
    expect(result.patch.state).toBe(to);
  });

  it('records latest_error of an ERRORED import', () => {
    const result = afterStatus(
      account({ state: 'scheduled' }),
      status('ERRORED', { latest_error: { code: 'BAD', detail: 'meter', domain: 'd' } }),
      clock,
      schedule,
    );
    expect(result.patch.error).toEqual({ code: 'BAD', detail: 'meter' });
  });

  it('an unknown word waits again, the detail naming the word', () => {
    const result = afterStatus(account({ state: 'scheduled', polls: 1 }), status('WAITING'), clock, schedule);
    expect(result).toMatchObject({
      step: 'poll',
      patch: { state: 'scheduled', addPoll: true, nextCheckAt: clock.now + 4000 },
    });
    expect(result.detail).toBe('import process status "WAITING", a word the spec does not give: read as not finished');
  });

  it('backs off per account: the delay doubles with each check, up to the cap', () => {
    const delays = [0, 1, 2, 3, 4, 5].map(
      (polls) =>
        (afterStatus(account({ state: 'scheduled', polls }), status('PENDING'), clock, schedule).patch.nextCheckAt ??
          0) - clock.now,
    );
    expect(delays).toEqual([2000, 4000, 8000, 8000, 8000, 8000]);
  });

  it('a scheduled account whose import process stays 404 waits, then at the bounded check is staged to be created again', () => {
    const waiting = afterStatus(account({ state: 'scheduled', polls: 2 }), null, clock, schedule, 4);
    expect(waiting.patch.state).toBe('scheduled');
    const lost = afterStatus(account({ state: 'scheduled', polls: 3 }), null, clock, schedule, 4);
    expect(lost.patch).toMatchObject({ state: 'staged', nextCheckAt: null, error: { code: 'import_process_lost' } });
    expect(lost.patch.error?.detail).toContain('at status check 4 after it the service still has no import process');
    // Only "no process" counts: a process still PENDING at that check waits on.
    expect(
      afterStatus(account({ state: 'scheduled', polls: 3 }), status('PENDING'), clock, schedule, 4).patch.state,
    ).toBe('scheduled');
  });

  it('a contradiction needs a person: PROCESSED without a platform_identifier, COMPLETED without a number', () => {
    const processed = afterStatus(account({ state: 'scheduled' }), status('PROCESSED'), clock, schedule);
    expect(processed.patch).toMatchObject({ state: 'errored', error: { code: 'service_contradiction' } });
    expect(processed.patch.error?.detail).toContain('PROCESSED without a platform_identifier');
    const completed = afterPollTransferStatus(
      account({ state: 'scheduled' }),
      { status: 'COMPLETED', platform_account_number: '' },
      clock,
      schedule,
    );
    expect(completed?.patch).toMatchObject({ state: 'errored', error: { code: 'service_contradiction' } });
  });

  it('keeps the platform identifier of a processed import', () => {
    expect(
      afterStatus(account({ state: 'scheduled' }), status('PROCESSED', { platform_identifier: 'K-1' }), clock, schedule)
        .patch.platformIdentifier,
    ).toBe('K-1');
  });
});

describe('account known only by post-import records', () => {
  it.each([
    [null, 'invalid'],
    [{ status: 'UNKNOWN', platform_account_number: '' }, 'unresolved'],
    [{ status: 'IN_PROGRESS', platform_account_number: '' }, 'unresolved'],
    [{ status: 'COMPLETED', platform_account_number: 'P-1' }, 'processed'],
    // The French tenants' words: each with a number is an account that exists (the word tells the industry switch).
    [{ status: 'PENDING', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'IN_PROGRESS', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'REJECTED', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'PENDING', platform_account_number: '' }, 'unresolved'],
  ] as const)('%o -> %s', (answer, to) => {
    expect(afterTransferStatus(answer === null ? null : { ...answer }).patch.state).toBe(to);
  });

  it.each([
    [{ status: 'COMPLETED', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'IN_PROGRESS', platform_account_number: '' }, 'scheduled'],
    // A number means the account exists, whatever the word (Octopus Energy France, Plenitude France).
    [{ status: 'PENDING', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'IN_PROGRESS', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'REJECTED', platform_account_number: 'P-1' }, 'processed'],
    [{ status: 'SWITCH_ON_HOLD', platform_account_number: 'P-1' }, 'processed'],
    // A word this tool does not know, without a number: v2 says what it is.
    [{ status: 'WAITING', platform_account_number: '' }, 'ask v2'],
    [{ status: 'REJECTED', platform_account_number: '' }, 'ask v2'],
    // Not there: v2 says why (latest_error) or that no process exists.
    [{ status: 'UNKNOWN', platform_account_number: '' }, 'ask v2'],
    [{ status: 'COMPLETED', platform_account_number: '' }, 'errored'],
    [null, 'ask v2'],
  ] as const)('polling a scheduled account, v1 %o -> %s', (answer, to) => {
    const polled = account({ state: 'scheduled', sentFingerprint: 'f1', polls: 1 });
    const transition = afterPollTransferStatus(polled, answer === null ? null : { ...answer }, clock, schedule);
    expect(transition?.patch.state ?? 'ask v2').toBe(to);
    if (to === 'processed')
      expect(transition?.patch).toMatchObject({ platformAccountNumber: 'P-1', nextCheckAt: null });
    // Still in progress: the next check backs off (second poll: 2 x the first delay).
    if (to === 'scheduled') expect(transition?.patch).toMatchObject({ addPoll: true, nextCheckAt: clock.now + 4000 });
  });

  it('a listed import is processed with its account number', () => {
    expect(afterListedImported('P-2').patch).toMatchObject({ state: 'processed', platformAccountNumber: 'P-2' });
  });
});
