import { statesWhere } from './account-states.js';
import type { AccountPatch, AccountRow, AccountState, ItemPatch, ItemRow } from '../ledger/index.js';

// What staging an export does to the ledger, decided by pure functions from what the ledger
// holds and what the export brings (docs/reruns.md). stage.ts applies the result.

export interface IncomingAccount {
  fingerprint: string;
  payload: string;
  /** No local issue: the account may be sent. */
  valid: boolean;
}

export type AccountStageDecision =
  | { action: 'insert'; state: AccountState }
  | { action: 'update'; patch: AccountPatch; step: string; detail?: string }
  | { action: 'keep' };

const CREATE_SENT: ReadonlySet<AccountState> = new Set(statesWhere('createSent'));

export function decideAccount(
  existing: AccountRow | undefined,
  incoming: IncomingAccount,
  invalidFromService: boolean,
): AccountStageDecision {
  const decision = decideStaging(existing, incoming, invalidFromService);
  // Purged (`ledger purge`: no payload, its fingerprint kept): what was sent stays sent; an account whose create is
  // yet to go out gets its payload again from the export, the only place that still holds it.
  const purged = existing !== undefined && existing.payload === null && existing.fingerprint !== null;
  if (!purged || decision.action === 'insert' || !needsPayload(existing, incoming)) return decision;
  if (decision.action === 'keep')
    return {
      action: 'update',
      step: 'stage',
      detail: 'staged again after a ledger purge',
      patch: { payload: incoming.payload },
    };
  return { ...decision, patch: { payload: incoming.payload, ...decision.patch } };
}

/** Whether a purged account's create is still to be sent, so that it needs its payload. */
function needsPayload(existing: AccountRow, incoming: IncomingAccount): boolean {
  const changed = existing.fingerprint !== incoming.fingerprint;
  return !(CREATE_SENT.has(existing.state) || (existing.state === 'errored' && !changed));
}

function decideStaging(
  existing: AccountRow | undefined,
  incoming: IncomingAccount,
  invalidFromService: boolean,
): AccountStageDecision {
  const fresh: AccountState = incoming.valid ? 'staged' : 'invalid';
  if (existing === undefined) return { action: 'insert', state: fresh };
  const replace = { payload: incoming.payload, fingerprint: incoming.fingerprint, changedFingerprint: null };
  if (existing.payload === null && existing.fingerprint === null) {
    // Known so far only by post-import records (or resolved as imported by another tool); `invalid`: found nowhere.
    if (existing.state === 'unresolved' || existing.state === 'invalid')
      return { action: 'update', step: 'stage', patch: { ...replace, state: fresh, error: null } };
    return {
      action: 'update',
      step: 'stage',
      detail: 'payload recorded for an account imported before',
      patch: replace,
    };
  }
  const changed = existing.fingerprint !== incoming.fingerprint;
  if (CREATE_SENT.has(existing.state) || (existing.state === 'errored' && !changed)) {
    if (!changed)
      return existing.changedFingerprint === null
        ? { action: 'keep' }
        : { action: 'update', step: 'stage', patch: { changedFingerprint: null } };
    if (existing.changedFingerprint === incoming.fingerprint) return { action: 'keep' };
    // The service cannot update an imported account: record the change for the report, never drop it silently.
    return {
      action: 'update',
      step: 'stage',
      detail: 'data changed after import',
      patch: { changedFingerprint: incoming.fingerprint },
    };
  }
  if (changed) {
    // staged, invalid, errored or unresolved with new data: (re)try it.
    return {
      action: 'update',
      step: 'stage',
      detail: 'data changed',
      patch: { ...replace, state: fresh, error: null },
    };
  }
  // Same data. A locally invalid account is re-checked (the mapping file may have been fixed);
  // one the service refused stays invalid until its data changes.
  if (existing.state === 'invalid' && !invalidFromService && incoming.valid) {
    return { action: 'update', step: 'stage', detail: 'now valid', patch: { state: 'staged', error: null } };
  }
  if (existing.state === 'staged' && !incoming.valid)
    return { action: 'update', step: 'stage', patch: { state: 'invalid' } };
  return { action: 'keep' };
}

export interface IncomingItem {
  fingerprint: string;
  body: string;
  valid: boolean;
  /** The record's natural key as the export gives it (a purged record holds only its sha256). */
  naturalKey: string;
}

export type ItemStageDecision =
  | { action: 'insert'; state: 'pending' | 'held' }
  | { action: 'update'; patch: ItemPatch; detail?: string }
  | { action: 'keep' };

export function decideItem(existing: ItemRow | undefined, incoming: IncomingItem): ItemStageDecision {
  const decision = decideItemStaging(existing, incoming);
  // Purged (`ledger purge`: no body): a record still to be sent gets its body and key again from the export.
  if (existing?.body !== '' || decision.action === 'insert') return decision;
  const restored = { body: incoming.body, naturalKey: incoming.naturalKey };
  if (decision.action === 'update' && decision.patch.body !== undefined)
    return { ...decision, patch: { ...decision.patch, ...restored } };
  // A record sent without an answer yet (`sending`) may be sent again to settle it: the same record, so its body too.
  const unchangedSending = existing.state === 'sending' && existing.fingerprint === incoming.fingerprint;
  if (existing.state === 'pending' || existing.state === 'held' || unchangedSending)
    return { action: 'update', patch: { ...(decision.action === 'update' ? decision.patch : {}), ...restored } };
  return decision;
}

function decideItemStaging(existing: ItemRow | undefined, incoming: IncomingItem): ItemStageDecision {
  const fresh = incoming.valid ? ('pending' as const) : ('held' as const);
  if (existing === undefined) return { action: 'insert', state: fresh };
  const changed = existing.fingerprint !== incoming.fingerprint;
  switch (existing.state) {
    case 'done':
    case 'unknown':
    case 'sending':
      // Sent (or maybe sent) already: a change is reported, not sent again.
      if (!changed)
        return existing.changedFingerprint === null
          ? { action: 'keep' }
          : { action: 'update', patch: { changedFingerprint: null } };
      if (existing.changedFingerprint === incoming.fingerprint) return { action: 'keep' };
      return {
        action: 'update',
        detail: 'data changed after it was sent',
        patch: { changedFingerprint: incoming.fingerprint },
      };
    case 'failed':
      // Refused by the service (data class): retried only when its data changed.
      if (!changed) return { action: 'keep' };
      return {
        action: 'update',
        detail: 'data changed',
        patch: { state: fresh, body: incoming.body, fingerprint: incoming.fingerprint, error: null },
      };
    case 'pending':
    case 'held':
      if (!changed && existing.state === fresh) return { action: 'keep' };
      return {
        action: 'update',
        patch: {
          state: fresh,
          body: incoming.body,
          fingerprint: incoming.fingerprint,
          ...(existing.state === 'held' ? { error: null } : {}),
        },
      };
  }
}
