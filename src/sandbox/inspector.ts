import type { V2Status } from '../schema/index.js';
import { SUPPLIER_STATUSES, type FaultOptions, type SupplierStatus } from './options.js';
import { isoWithOffset } from './time.js';
import type { LatestError, ProcessRecord, StoredTransaction } from './records.js';
import type { RequestLogEntry } from './request-log.js';
import type { SandboxRuntime } from './server.js';
import { accountNumberOf, platformIdentifierOf } from './store.js';

// The service's exact state, for tests of the client, the engine and the operator commands.
// Every answer is a copy: changing it changes nothing in the sandbox.

export interface InspectedNote {
  body: string | null;
  documentPaths: string[];
  createdAt: string;
  isPinned: boolean;
  unpinAt: string | null;
  /** Added by the sandbox (the pinned note of force_add_to_current_statement), not sent by a client. */
  bySandbox: boolean;
}

/** A transaction as the sandbox stored it (its `data` is {} when retainPayloads is false). */
export type InspectedTransaction = StoredTransaction;

export interface InspectedPaymentInstruction {
  vendor: string;
  reference: string;
  type: string;
  createdAt: string;
}

export interface InspectedAccount {
  importSupplier: string;
  externalAccountNumber: string;
  status: V2Status;
  /** `A-` + 8 upper-case hex digits once PROCESSED, else null. */
  platformAccountNumber: string | null;
  platformIdentifier: string | null;
  /** Create requests answered 201 for this pair (1 on a clean exactly-once run). */
  createRequestsAccepted: number;
  /** The payload of the latest accepted create; undefined when retainPayloads is false. */
  payload: unknown;
  latestError: LatestError | null;
  createdAt: string;
  modifiedAt: string;
  accountCreatedAt: string | null;
  notes: InspectedNote[];
  transactions: InspectedTransaction[];
  /** As echoed on creation; only {statement_id} when retainPayloads is false. */
  historicalStatements: Array<Record<string, unknown>>;
  paymentInstructions: InspectedPaymentInstruction[];
}

export interface SandboxInspector {
  /** One import process, or undefined when none exists for the pair. */
  account(importSupplier: string, externalAccountNumber: string): InspectedAccount | undefined;
  /** Every import process (of one supplier, if given), in creation order. O(n). */
  accounts(importSupplier?: string): InspectedAccount[];
  /** How many import processes exist (all suppliers). */
  accountCount(): number;
  supplierStatus(code: string): SupplierStatus | undefined;
  requests(): RequestLogEntry[];
  /** Requests received since the last resetLog, recorded or not. */
  requestCount(): number;
  inFlight(): number;
  /** The most requests in flight at once since the start or the last resetLog. */
  maxInFlight(): number;
  resetLog(): void;
}

export interface SandboxControl {
  /** Sets (or adds) an import supplier's status at run time. */
  setSupplierStatus(code: string, status: SupplierStatus): void;
  /** Finishes every PENDING and IN_PROGRESS process now; returns how many. */
  settleAll(): number;
  /** Changes the fault settings at run time (e.g. faults off for a rerun). */
  setFaults(changes: Partial<FaultOptions>): void;
  /**
   * Adds imported accounts (PROCESSED, with account numbers) without create requests, cheaply, for a supplier with many
   * accounts; pairs that have a process already are left as they are. Returns how many were added.
   */
  seedImported(supplier: string, externalAccountNumbers: Iterable<string>): number;
}

function inspect(record: ProcessRecord): InspectedAccount {
  const post = record.post;
  return structuredClone<InspectedAccount>({
    importSupplier: record.supplier,
    externalAccountNumber: record.externalAccountNumber,
    status: record.status,
    platformAccountNumber: accountNumberOf(record),
    platformIdentifier: platformIdentifierOf(record),
    createRequestsAccepted: record.createRequestsAccepted,
    payload: record.payload,
    latestError: record.latestError ? { ...record.latestError } : null,
    createdAt: isoWithOffset(record.createdAt),
    modifiedAt: isoWithOffset(record.modifiedAt),
    accountCreatedAt: record.accountCreatedAt === null ? null : isoWithOffset(record.accountCreatedAt),
    notes: (post?.notes ?? []).map(({ createdAtGiven: _given, ...note }) => note),
    transactions: post?.transactions ?? [],
    historicalStatements: post?.statements ?? [],
    paymentInstructions: post?.paymentInstructions ?? [],
  });
}

export function createInspector(runtime: SandboxRuntime): SandboxInspector {
  const { store, log } = runtime;
  return {
    account: (supplier, externalAccountNumber) => {
      const record = store.get(supplier, externalAccountNumber, runtime.clock());
      return record ? inspect(record) : undefined;
    },
    accounts: (supplier) =>
      (supplier === undefined ? store.supplierCodes() : [supplier]).flatMap((code) =>
        store.list(code, runtime.clock()).map(inspect),
      ),
    accountCount: () => store.size,
    supplierStatus: (code) => store.suppliers.get(code),
    requests: () => log.entries(),
    requestCount: () => log.total,
    inFlight: () => log.inFlight,
    maxInFlight: () => log.maxInFlight,
    resetLog: () => log.reset(),
  };
}

export function createControl(runtime: SandboxRuntime): SandboxControl {
  return {
    setSupplierStatus: (code, status) => {
      if (!(SUPPLIER_STATUSES as readonly string[]).includes(status))
        throw new RangeError(
          `supplier status: expected ${SUPPLIER_STATUSES.join(', ')}, got ${JSON.stringify(status)}`,
        );
      runtime.store.suppliers.set(code, status);
    },
    settleAll: () => runtime.store.settleAll(runtime.clock()),
    setFaults: (changes) => runtime.faults.update(changes),
    seedImported: (supplier, externalAccountNumbers) => {
      const now = runtime.clock();
      let added = 0;
      for (const number of externalAccountNumbers) if (runtime.store.seedImported(supplier, number, now)) added += 1;
      return added;
    },
  };
}
