import { Code } from '../../schema/index.js';
import type { Reply } from '../http-io.js';
import { isoWithOffset } from '../time.js';
import type { ProcessRecord } from '../records.js';
import { responseNames } from '../kraken.js';
import { accountNumberOf } from '../store.js';
import { INVALID_IMPORT_SUPPLIER, isRunning, notFound, type HandlerContext } from './common.js';

// Spec "Status and listing endpoints (v1)". No pagination: a bare array of every process of the
// supplier (docs/service.md "Status and list endpoints"), in the order the processes were first created.

/** GET /v1/data-import/account-transfer-status/<supplier>/<external-account-number>/ */
export function getTransferStatus(context: HandlerContext): Reply {
  const [supplier = '', externalAccountNumber = ''] = context.params;
  const record = context.store.get(supplier, externalAccountNumber, context.now);
  if (!record)
    return notFound(
      `No account import for import supplier ${supplier} and external account number ${externalAccountNumber}.`,
      Code.notFound,
    );
  // ERRORED and CANCELLED: "a previous attempt failed" -> UNKNOWN with "" (the sandbox's reading of the spec).
  // An account that exists: the spec's COMPLETED, or a tenant's word for its industry switch.
  const status =
    record.status === 'PROCESSED'
      ? context.transferStatusWord
      : isRunning(record.status)
        ? (context.processingStatusWord ?? 'IN_PROGRESS')
        : 'UNKNOWN';
  // NONUM-: a service contradicting itself, COMPLETED ("an account has been created") without its number.
  const number = externalAccountNumber.startsWith('NONUM-') ? '' : (accountNumberOf(record) ?? '');
  const body = { status, platform_account_number: number };
  return { status: 200, body: responseNames(context.dialect, body, true) };
}

function listItem(record: ProcessRecord): Record<string, unknown> {
  const imported = record.status === 'PROCESSED';
  return {
    external_account_number: record.externalAccountNumber,
    platform_account_number: imported ? accountNumberOf(record) : null,
    account_created_at: imported && record.accountCreatedAt !== null ? isoWithOffset(record.accountCreatedAt) : null,
  };
}

function list(context: HandlerContext, keep: (record: ProcessRecord) => boolean): Reply {
  const [supplier = ''] = context.params;
  if (!context.store.suppliers.has(supplier)) {
    return {
      status: 400,
      body: {
        detail: `${JSON.stringify(supplier)} is not an import supplier of this service.`,
        code: INVALID_IMPORT_SUPPLIER,
      },
    };
  }
  const items = context.store.list(supplier, context.now).filter(keep);
  return { status: 200, body: items.map((record) => responseNames(context.dialect, listItem(record))) };
}

/** GET /v1/data-import/all-account-import-processes/<supplier>/: staged and imported. */
export function listAllImports(context: HandlerContext): Reply {
  return list(context, () => true);
}

/** GET /v1/data-import/pending-account-import-processes/<supplier>/: staged, not (yet) imported. */
export function listPendingImports(context: HandlerContext): Reply {
  return list(context, (record) => record.status !== 'PROCESSED');
}

/** GET /v1/data-import/imported-account-import-processes/<supplier>/: accounts that exist. */
export function listImportedAccounts(context: HandlerContext): Reply {
  return list(context, (record) => record.status === 'PROCESSED');
}
