import { validatePaymentInstructionRequest } from '../../schema/index.js';
import { asObject, asString } from '../../schema/read.js';
import type { Reply } from '../http-io.js';
import { isoWithOffset } from '../time.js';
import { accountNumberOf } from '../store.js';
import { extraFields } from '../records.js';
import { responseNames } from '../kraken.js';
import { resolvePostImport, withContract, type HandlerContext, type PostImportTarget } from './common.js';

// Spec "Create payment instruction" with a simulated upstream vendor (docs/sandbox.md):
// reference FAIL-... -> persistent vendor failure, 400, never succeeds;
// reference FLAKY-... -> intermittent vendor failure, 500 on the first flakyAttempts tries, then 201;
// reference LOST-... -> created, then the answer is lost (the connection destroyed after lostAnswerMs).
// The platform keeps one active instruction per account: a second (any reference) gets its 400
// CreatePaymentInstructionError exactly as the real platform words it, without a `code`
// (docs/service.md "Payment instructions"); multiplePaymentInstructions lifts the rule, and then
// only the same reference twice is refused. Vendor failure bodies add `detail` and `code`.

export const VENDOR_FAILED = 'payment_vendor_failed';
export const VENDOR_UNAVAILABLE = 'payment_vendor_unavailable';
export const INSTRUCTION_EXISTS = 'payment_instruction_already_exists';
const INSTRUCTION_FIELDS: ReadonlySet<string> = new Set([
  'import_supplier',
  'external_account_number',
  'vendor',
  'reference',
  'type',
]);
/** The real platform's error_detail for a second instruction on an account. */
const ALREADY_ACTIVE = 'Account already has an active instruction';

function vendorError(status: number, target: PostImportTarget, reference: string, detail: string, code: string): Reply {
  return {
    status,
    body: {
      error_detail: detail,
      external_account_number: target.externalAccountNumber,
      import_supplier: target.supplier,
      reference,
      detail,
      code,
    },
  };
}

/** POST /v1/data-import/payment-instruction/create/ -> 201 {platform_account_number, reference} */
export function createPaymentInstruction(context: HandlerContext): Reply {
  const spec = validatePaymentInstructionRequest(context.body);
  const resolved = resolvePostImport(context, withContract(context, 'paymentInstruction', context.body, spec));
  if ('reply' in resolved) return resolved.reply;
  const { record, target } = resolved;
  const raw = asObject(context.body) ?? {};
  const reference = asString(raw['reference']) ?? '';
  const vendor = asString(raw['vendor']) ?? '';
  const instructions = (context.store.postImport(record).paymentInstructions ??= []);
  if (!context.multiplePaymentInstructions && instructions.length > 0) {
    return {
      status: 400,
      body: {
        error_detail: ALREADY_ACTIVE,
        external_account_number: target.externalAccountNumber,
        import_supplier: target.supplier,
        reference,
      },
    };
  }
  if (instructions.some((item) => item.reference === reference)) {
    return vendorError(
      400,
      target,
      reference,
      `Account already has an active instruction with reference ${reference}.`,
      INSTRUCTION_EXISTS,
    );
  }
  if (reference.startsWith('FAIL-')) {
    return vendorError(
      400,
      target,
      reference,
      `The vendor ${vendor} has no instruction with reference ${reference}.`,
      VENDOR_FAILED,
    );
  }
  if (reference.startsWith('FLAKY-')) {
    const key = `${target.supplier}\u0000${target.externalAccountNumber}\u0000${reference}`;
    const attempts = (context.flakyCounts.get(key) ?? 0) + 1;
    context.flakyCounts.set(key, attempts);
    if (attempts <= context.flakyAttempts) {
      return vendorError(
        500,
        target,
        reference,
        `The vendor ${vendor} could not be reached; retry the request as it is.`,
        VENDOR_UNAVAILABLE,
      );
    }
  }
  const extra = context.retainPayloads ? extraFields(raw, INSTRUCTION_FIELDS) : undefined;
  instructions.push({
    vendor,
    reference,
    type: asString(raw['type']) ?? '',
    createdAt: isoWithOffset(context.now),
    ...(extra === undefined ? {} : { extra }),
  });
  const body = { platform_account_number: accountNumberOf(record), reference };
  const created: Reply = { status: 201, body: responseNames(context.dialect, body) };
  return reference.startsWith('LOST-') ? { ...created, lose: true } : created;
}
