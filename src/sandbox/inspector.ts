import { inspect, type InspectedAccount } from './inspected.js';
import { SUPPLIER_STATUSES, type FaultOptions, type SupplierStatus } from './options.js';
import type { RequestLogEntry } from './request-log.js';
import type { SandboxRuntime } from './server.js';

export type { InspectedAccount } from './inspected.js';

// The service's exact state, for tests of the client, the engine and the operator commands.
// Every answer is a copy: changing it changes nothing in the sandbox.

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
  /** Answers trickling now (--trickle-ms): their head is sent, their body is not finished. */
  trickling(): number;
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
    trickling: () => runtime.trickling.size,
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
