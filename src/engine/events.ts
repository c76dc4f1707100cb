import type { FileOutOfOrder, OrderProof } from '../intake/order-proof.js';
import type { AccountState, ItemKind } from '../ledger/index.js';

/** What staging did to the ledger (stage.ts), told in the `staged` event and in the run's result. */
export interface StageSummary {
  /** The run stopped before the whole export was read: the rest of it was never read. */
  stopped?: boolean;
  accounts: number;
  invalid: number;
  orphans: number;
  changedAfterImport: number;
  /** Records found changed in the export after they were sent (reported, never resent). */
  recordsChangedAfterImport: number;
  /** Note rows identical to an earlier one of their account, counted once (mapping/note-identity.ts). */
  duplicateNotes: number;
  /** Transactions dated before the open statement period that the service will move into it (forcing declared). */
  beforeOpenPeriod?: number;
  /** Values dropped under the mapping file's `on_invalid: omit` (validate lists each). */
  omittedValues: number;
  /** Work staging added to the run: accounts that became `staged`, records that became `pending`. */
  added: { accounts: number; items: Record<ItemKind, number> };
}

/**
 * What the engine tells the outside world. Progress bars, the final summary and an
 * NDJSON log all consume the same stream through an EventSink; the engine never prints.
 */
export type EngineEvent =
  /** Staging so far; `added`: the work it added to the run (accounts to create, records to send). */
  | {
      type: 'staging';
      accounts: number;
      orphans: number;
      added: { accounts: number; items: Record<ItemKind, number> };
    }
  | ({ type: 'staged' } & StageSummary)
  /**
   * Files not proven in external account number order (docs/complete-or-not.md): they are sorted on disk
   * before any account is handed out. `line`: where the first row out of order is; `reason`: why no proof was possible.
   */
  | { type: 'sorting'; files: Array<{ file: string; line?: number; reason?: string }> }
  /**
   * Every CSV file's order proven or found wanting (milliseconds the key scans took; files to sort), before staging.
   */
  | { type: 'order'; ms: number; files: number; outOfOrder: number }
  /** An export file starts being read (staged whole, streamed or sorted): once per file and read. */
  | { type: 'reading'; file: string }
  /** The work the run starts with (accounts per state, pending items per kind). */
  | { type: 'plan'; toCreate: number; toProcess: number; items: Record<ItemKind, number> }
  | {
      type: 'account';
      accountId: number;
      externalAccountNumber: string;
      from: AccountState;
      to: AccountState;
      code?: string;
    }
  /**
   * An account staging found invalid (local validation), once as it becomes invalid or its data changes and it is
   * still invalid; held back from the service. `code`, `file`, `line`: its first problem; `issues`: how many it has.
   */
  | {
      type: 'invalid';
      accountId: number;
      externalAccountNumber: string;
      code: string;
      file?: string;
      line?: number;
      issues: number;
    }
  /** Records settled by one answer; `code`: the error code when they failed or their outcome is unknown. */
  | {
      type: 'items';
      accountId: number;
      kind: ItemKind;
      done: number;
      failed: number;
      unknown: number;
      code?: string;
    }
  | { type: 'retrying'; code: string }
  /**
   * The service answered a status word this tool does not know (the spec's enums may grow, spec "Versioning"): read as
   * "not finished" and asked again. Once per word and run; `endpoint`: the client method that answered it.
   */
  | { type: 'status_word'; endpoint: string; word: string }
  /** `code`: the fatal failure's code when the run stops for one. */
  | { type: 'stopping'; reason: StopReason; detail?: string; code?: string };

/** max_errors: --max-errors was exceeded; the run stopped taking new work (exit 1, 5 when a person must act). */
export type StopReason = 'finished' | 'interrupted' | 'fatal' | 'wait_timeout' | 'max_errors';

export interface EventSink {
  emit(event: EngineEvent): void;
}

/** Fans one event out to several sinks. */
export function teeSink(...sinks: EventSink[]): EventSink {
  return { emit: (event) => sinks.forEach((sink) => sink.emit(event)) };
}

export const nullSink: EventSink = { emit: () => undefined };

/**
 * Reading the export, as events: each file once as it starts being read ('reading'), and the proof of its order
 * ('order', then 'sorting' for the files sorted first). For the export's open (intake/export-in-order.ts).
 */
export function readingEvents(sink: EventSink): {
  onProgress: (progress: { file: string }) => void;
  onProof: (proof: OrderProof) => void;
} {
  const seen = new Set<string>();
  const unsorted = (file: FileOutOfOrder): { file: string; line?: number; reason?: string } =>
    file.order === 'unsorted' ? { file: file.file, line: file.line } : { file: file.file, reason: file.reason };
  return {
    onProgress: ({ file }) => {
      if (seen.has(file)) return;
      seen.add(file);
      sink.emit({ type: 'reading', file });
    },
    onProof: (proof) => {
      sink.emit({ type: 'order', ms: proof.ms, files: proof.files.length, outOfOrder: proof.outOfOrder.length });
      if (proof.outOfOrder.length > 0) sink.emit({ type: 'sorting', files: proof.outOfOrder.map(unsorted) });
    },
  };
}
