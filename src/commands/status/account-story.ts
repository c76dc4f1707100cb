import type { ImportServiceClient } from '../../api/types.js';
import type { AccountRow, ItemRow, LedgerEvent, StoredIssue } from '../../ledger/index.js';
import type { V1StatusRecord, V2StatusRecord } from '../../schema/index.js';
import type { LedgerSource } from '../common/ledger-source.js';
import { recordKeyOf } from '../common/report-rows.js';

// `migrate status <supplier> --account <n>`: one account's whole story: what the ledger did
// (history, issues, records) and what the service says now (v2 status with latest_error, v1
// transfer status with the platform account number). Never the payload or a record's body
// (personal data): records are named by their key, file and line.

export interface AccountStory {
  import_supplier: string;
  external_account_number: string;
  ledger: {
    state: string;
    platform_account_number: string | null;
    platform_identifier: string | null;
    create_attempts: number;
    polls: number;
    origin: { file: string | null; line: number | null };
    first_staged_at: string;
    updated_at: string;
    changed_after_import: boolean;
    error: AccountRow['error'];
    issues: StoredIssue[];
    history: Array<
      Pick<LedgerEvent, 'at' | 'runId' | 'step' | 'fromState' | 'toState' | 'detail'> & { record: string | null }
    >;
    records: Array<{
      record: string;
      key: string;
      state: string;
      result: string | null;
      attempts: number;
      file: string | null;
      line: number | null;
      error: ItemRow['error'];
      /** Changed in the export after it was sent: the platform keeps what was sent, a push never resends it. */
      changed_after_import: boolean;
    }>;
  } | null;
  service: { v2: V2StatusRecord | null; v1: V1StatusRecord | null } | null;
  /** Other import suppliers the ledger has this external account number under (a wrong supplier given). */
  other_suppliers: string[];
}

export async function tellAccountStory(input: {
  supplier: string;
  externalAccountNumber: string;
  ledger: LedgerSource | undefined;
  client: ImportServiceClient | undefined;
}): Promise<AccountStory> {
  const { supplier, externalAccountNumber, ledger, client } = input;
  const account = ledger?.read.account(supplier, externalAccountNumber);
  const service =
    client === undefined
      ? null
      : await Promise.all([
          client.getImportStatus(supplier, externalAccountNumber),
          client.getTransferStatus(supplier, externalAccountNumber),
        ]).then(([v2, v1]) => ({ v2, v1 }));
  return {
    import_supplier: supplier,
    external_account_number: externalAccountNumber,
    ledger: ledger === undefined || account === undefined ? null : ledgerStory(ledger, account),
    service,
    other_suppliers: (ledger?.read.accountsByNumber(externalAccountNumber) ?? [])
      .map((row) => row.importSupplier)
      .filter((code) => code !== supplier),
  };
}

function ledgerStory(ledger: LedgerSource, account: AccountRow): NonNullable<AccountStory['ledger']> {
  const items = ledger.read.items(account.id);
  const kindOf = new Map(
    items.map((item) => [
      item.id,
      `${item.kind}${item.originLine === null ? '' : ` (${item.originFile}:${item.originLine})`}`,
    ]),
  );
  return {
    state: account.state,
    platform_account_number: account.platformAccountNumber,
    platform_identifier: account.platformIdentifier,
    create_attempts: account.attempts,
    polls: account.polls,
    origin: { file: account.originFile, line: account.originLine },
    first_staged_at: account.createdAt,
    updated_at: account.updatedAt,
    changed_after_import: account.changedFingerprint !== null,
    error: account.error,
    issues: ledger.read.issues(account.id),
    history: ledger.read.history(account.id).map((event) => ({
      at: event.at,
      runId: event.runId,
      step: event.step,
      fromState: event.fromState,
      toState: event.toState,
      detail: event.detail,
      record: event.itemId === null ? null : (kindOf.get(event.itemId) ?? null),
    })),
    records: items.map((item) => ({
      record: item.kind,
      key: recordKeyOf(item.kind, item.naturalKey),
      state: item.state,
      result: item.result,
      attempts: item.attempts,
      file: item.originFile,
      line: item.originLine,
      error: item.error,
      changed_after_import: item.changedFingerprint !== null,
    })),
  };
}
