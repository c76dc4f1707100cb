import { Code, validateAccountRequest } from '../../schema/index.js';
import { asObject, asString } from '../../schema/read.js';
import type { Reply } from '../http-io.js';
import { isoWithOffset } from '../time.js';
import { decodeAccountRequest, responseNames } from '../kraken.js';
import { accountNumberOf, platformIdentifierOf } from '../store.js';
import {
  accountValidationError,
  isRunning,
  notFound,
  CREATE_IN_PROGRESS,
  supplierGate,
  supplierIssues,
  withContract,
  type HandlerContext,
} from './common.js';

// Spec "Account import endpoints (v2)": validate, create (scheduled, not immediate) and status.

function payloadSupplier(body: unknown): unknown {
  return asObject(asObject(body)?.['payload'])?.['import_supplier'];
}

/**
 * Gate, then every problem of the payload at once (the same validator `migrate validate` uses);
 * in the `kraken` dialect the real platform's form is checked and read first (kraken.ts).
 */
function checkAccountRequest(context: HandlerContext, create: boolean): { refused: Reply } | { payload: unknown } {
  const supplier = payloadSupplier(context.body);
  const gate = supplierGate(context.store, supplier);
  if (gate) return { refused: gate };
  const decoded =
    context.dialect === 'kraken'
      ? decodeAccountRequest(context.body, create)
      : { payload: asObject(context.body)?.['payload'], checked: context.body, issues: [] };
  const spec = validateAccountRequest(decoded.checked, { today: context.today });
  const issues = [
    ...supplierIssues(context.store, supplier),
    ...decoded.issues,
    ...withContract(context, create ? 'createAccount' : 'validateAccount', context.body, spec),
  ];
  return issues.length > 0 ? { refused: accountValidationError(issues) } : { payload: decoded.payload };
}

/** POST /v2/data-import/accounts/validate/ -> 200 {} */
export function validateAccount(context: HandlerContext): Reply {
  const checked = checkAccountRequest(context, false);
  return 'refused' in checked ? checked.refused : { status: 200, body: {} };
}

/**
 * POST /v2/data-import/accounts/ -> 201 {} (scheduled). Already PROCESSED: the already-imported
 * body. PENDING/IN_PROGRESS: 400 account_import_process_in_progress (the sandbox's choice, the
 * spec is silent). ERRORED/CANCELLED: accepted; a new process replaces the old one.
 */
export function createImportProcess(context: HandlerContext): Reply {
  const checked = checkAccountRequest(context, true);
  if ('refused' in checked) return checked.refused;
  const payload = asObject(checked.payload) ?? {};
  const supplier = asString(payload['import_supplier']) ?? '';
  const externalAccountNumber = asString(payload['external_account_number']) ?? '';
  const existing = context.store.get(supplier, externalAccountNumber, context.now);
  if (existing?.status === 'PROCESSED') {
    return {
      status: 400,
      body: {
        non_field_errors: {
          detail:
            `The account import process with the account number ${externalAccountNumber} has already been ` +
            `imported.`,
          code: Code.alreadyImported,
        },
        account_id: accountNumberOf(existing),
      },
    };
  }
  if (existing?.status === 'PENDING' || existing?.status === 'IN_PROGRESS') {
    const detail =
      `An import process for the account number ${externalAccountNumber} is already ` +
      `${existing.status}; wait for it to finish.`;
    return { status: 400, body: { detail, code: CREATE_IN_PROGRESS, errors: [] } };
  }
  // A create lost after its 201 (a proxy or a queue that lost it): no import process appears.
  if (context.losesCreate(supplier, externalAccountNumber)) return { status: 201, body: {}, lost: 'lost_create' };
  context.store.schedule(supplier, externalAccountNumber, payload, context.now);
  return { status: 201, body: {} };
}

/** GET /v2/data-import/accounts/<supplier>/<external-identifier>/ */
export function getImportStatus(context: HandlerContext): Reply {
  const [supplier = '', externalAccountNumber = ''] = context.params;
  const record = context.store.get(supplier, externalAccountNumber, context.now);
  if (!record) return notFound('The requested resource was not found.', Code.notFound);
  return {
    status: 200,
    body: responseNames(context.dialect, {
      status: (isRunning(record.status) ? context.processingStatusWord : undefined) ?? record.status,
      // NOID-: a service contradicting itself, PROCESSED without the identifier the spec says it then has.
      platform_identifier: externalAccountNumber.startsWith('NOID-') ? null : platformIdentifierOf(record),
      created_at: isoWithOffset(record.createdAt),
      modified_at: isoWithOffset(record.modifiedAt),
      latest_error: record.latestError ? { ...record.latestError } : null,
    }),
  };
}
