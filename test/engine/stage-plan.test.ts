import { describe, expect, it } from 'vitest';
import type { AccountRow, AccountState, ItemRow, ItemState } from '../../src/ledger/index.js';
import { decideAccount, decideItem } from '../../src/engine/stage-plan.js';
import { accountRow } from '../ledger/helpers/account-row.js';

function row(state: AccountState, fingerprint = 'old', payload: string | null = '{}'): AccountRow {
  return accountRow({
    id: 7,
    externalAccountNumber: 'A',
    state,
    payload,
    fingerprint,
    originFile: null,
    originLine: null,
    lastRunId: null,
  });
}

const same = { fingerprint: 'old', payload: '{}', valid: true };
const changed = { fingerprint: 'new', payload: '{"a":1}', valid: true };

describe('decideAccount (rerun semantics)', () => {
  it.each([
    ['new valid account', undefined, same, false, { action: 'insert', state: 'staged' }],
    ['new invalid account', undefined, { ...same, valid: false }, false, { action: 'insert', state: 'invalid' }],
    ['done, same data: skipped', row('done'), same, false, { action: 'keep' }],
    ['scheduled, same data: polled, not re-created', row('scheduled'), same, false, { action: 'keep' }],
    ['invalid by the service, same data: stays invalid', row('invalid'), same, true, { action: 'keep' }],
    ['errored, same data: stays errored', row('errored'), same, false, { action: 'keep' }],
  ] as const)('%s', (_name, existing, incoming, fromService, expected) => {
    expect(decideAccount(existing, incoming, fromService)).toEqual(expected);
  });

  it.each(['invalid', 'errored', 'staged', 'unresolved'] as const)('%s with changed data is staged again', (state) => {
    const decision = decideAccount(row(state), changed, state === 'invalid');
    expect(decision).toMatchObject({
      action: 'update',
      patch: { state: 'staged', fingerprint: 'new', payload: '{"a":1}', error: null },
    });
  });

  it.each(['creating', 'scheduled', 'processed', 'done'] as const)(
    '%s with changed data is reported, not resent',
    (state) => {
      const decision = decideAccount(row(state), changed, false);
      expect(decision).toMatchObject({
        action: 'update',
        detail: 'data changed after import',
        patch: { changedFingerprint: 'new' },
      });
      expect(decision.action === 'update' && decision.patch.state).toBeFalsy();
    },
  );

  it('a locally invalid account whose problems are fixed is staged', () => {
    expect(decideAccount(row('invalid'), same, false)).toMatchObject({ action: 'update', patch: { state: 'staged' } });
  });

  it('an account known only by post-import records gets its payload', () => {
    expect(decideAccount(row('unresolved', '', null), changed, false)).toMatchObject({
      action: 'update',
      patch: { state: 'staged', payload: '{"a":1}' },
    });
  });

  it('a change reverted to what was imported clears the flag', () => {
    const existing = { ...row('done'), changedFingerprint: 'new' };
    expect(decideAccount(existing, same, false)).toEqual({
      action: 'update',
      step: 'stage',
      patch: { changedFingerprint: null },
    });
  });
});

function item(state: ItemState, fingerprint = 'old'): ItemRow {
  return {
    id: 1,
    accountId: 7,
    kind: 'note',
    naturalKey: 'k',
    body: '{}',
    fingerprint,
    changedFingerprint: null,
    state,
    result: null,
    settledBy: null,
    attempts: 0,
    originFile: null,
    originLine: null,
    error: null,
    updatedAt: '',
  };
}

describe('decideItem', () => {
  const incoming = { fingerprint: 'old', body: '{}', valid: true, naturalKey: 'k' };
  const newer = { fingerprint: 'new', body: '{"x":1}', valid: true, naturalKey: 'k' };
  it.each([
    ['new', undefined, incoming, { action: 'insert', state: 'pending' }],
    ['new invalid', undefined, { ...incoming, valid: false }, { action: 'insert', state: 'held' }],
    ['done, same', item('done'), incoming, { action: 'keep' }],
    ['failed, same: not retried', item('failed'), incoming, { action: 'keep' }],
    ['unknown, same: left for the operator', item('unknown'), incoming, { action: 'keep' }],
    ['pending, same', item('pending'), incoming, { action: 'keep' }],
  ] as const)('%s', (_name, existing, input, expected) => {
    expect(decideItem(existing, input)).toEqual(expected);
  });

  it('a failed item with changed data is sent again', () => {
    expect(decideItem(item('failed'), newer)).toMatchObject({
      action: 'update',
      patch: { state: 'pending', body: '{"x":1}', error: null },
    });
  });

  it.each(['done', 'sending', 'unknown'] as const)('%s with changed data is reported, never resent', (state) => {
    expect(decideItem(item(state), newer)).toMatchObject({ action: 'update', patch: { changedFingerprint: 'new' } });
  });
});

describe('after a ledger purge (no payload, no body; fingerprints kept)', () => {
  const purged = (state: AccountState): AccountRow => row(state, 'old', null);
  it('a done account: nothing staged again, nothing to send', () => {
    expect(decideAccount(purged('done'), same, false)).toEqual({ action: 'keep' });
  });
  it('a done account whose export row changed: reported as changed after import, its payload not stored again', () => {
    const decision = decideAccount(purged('done'), changed, false);
    expect(decision).toEqual({
      action: 'update',
      step: 'stage',
      detail: 'data changed after import',
      patch: { changedFingerprint: 'new' },
    });
  });
  it('an account not sent yet (purge --all): its payload staged again from the export', () => {
    expect(decideAccount(purged('staged'), same, false)).toMatchObject({ action: 'update', patch: { payload: '{}' } });
    expect(decideAccount(purged('invalid'), same, false)).toMatchObject({
      action: 'update',
      patch: { payload: '{}', state: 'staged' },
    });
  });
  const bodyless = (state: ItemState): ItemRow => ({ ...item(state), body: '', naturalKey: 'purged:abc' });
  it('a done record: kept as it is', () => {
    expect(decideItem(bodyless('done'), { fingerprint: 'old', body: '{}', valid: true, naturalKey: 'k' })).toEqual({
      action: 'keep',
    });
  });
  it('a pending record (purge --all): its body and key given back', () => {
    expect(decideItem(bodyless('pending'), { fingerprint: 'old', body: '{}', valid: true, naturalKey: 'k' })).toEqual({
      action: 'update',
      patch: { body: '{}', naturalKey: 'k' },
    });
  });
});
