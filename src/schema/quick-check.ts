import { ACCOUNT_TYPES, COMMUNICATION_PREFERENCES, DOCUMENT_ACCESSIBILITY, PERIOD_LENGTHS } from './account.js';
import { documentPathProblem } from './document-path.js';
import { isCalendarDate, isIsoDatetime, isPlainEmail } from './primitives.js';
import { isValidInternationalPhone } from './phone.js';
import { PAYMENT_TYPES, TRANSACTION_TYPES } from './transaction.js';

// A quick yes for the common account payload, notes and transactions requests: true only where their schema
// (account.ts, requests.ts) certainly accepts the body, false where that schema must judge (then it does, and every
// message is its own). It checks the fields a mapped export usually fills with the schema's own rules and answers
// false for anything else (ledgers, statements, metadata, line and tax items, a structured street address, an
// undefined value). Profiled: the schemas' parse was about a fifth of validate's main thread, most of it on bodies
// that have no problem.

type Check = (value: unknown) => boolean;

const text =
  (max: number, min = 1): Check =>
  (value) =>
    typeof value === 'string' && value.length >= min && value.length <= max;
const oneOf = (values: readonly string[]): Check => {
  const allowed: ReadonlySet<unknown> = new Set(values);
  return (value) => allowed.has(value);
};
const boolean: Check = (value) => typeof value === 'boolean';
const date: Check = (value) => typeof value === 'string' && isCalendarDate(value);
const datetime: Check = (value) => typeof value === 'string' && isIsoDatetime(value);
const email: Check = (value) => typeof value === 'string' && value.length <= 254 && isPlainEmail(value);
const phone: Check = (value) => typeof value === 'string' && value.length <= 32 && isValidInternationalPhone(value);
const amount: Check = (value) => typeof value === 'number' && Number.isFinite(value);
const dayOfPeriod: Check = (value) => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 28;

interface Shape {
  fields: Readonly<Record<string, Check>>;
  required: readonly string[];
}

/** A plain object whose every key is a field of the shape, with a value its check accepts, and every required one. */
function fits(value: unknown, shape: Shape): boolean {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const check = Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
    if (check === undefined || !check(object[key])) return false;
  }
  return shape.required.every((key) => Object.hasOwn(object, key));
}

const object =
  (shape: Shape): Check =>
  (value) =>
    fits(value, shape);
const listOf =
  (shape: Shape, min = 0): Check =>
  (value) =>
    Array.isArray(value) && value.length >= min && value.every((item) => fits(item, shape));

const customerPreferences: Shape = {
  fields: Object.fromEntries(
    [
      'opted_into_sms',
      'opted_into_recommended',
      'opted_into_updates',
      'opted_into_third_parties',
      'opted_into_offers',
      'is_user_psr_consent_obtained',
    ].map((field) => [field, boolean]),
  ),
  required: [],
};

const customer: Shape = {
  fields: {
    given_name: text(255),
    family_name: text(255),
    email,
    mobile: phone,
    landline: phone,
    date_of_birth: date,
    title: text(20),
    salutation: text(128),
    customer_preferences: object(customerPreferences),
  },
  required: [],
};

const COUNTRY = /^[A-Z]{2}$/;
const billingAddress: Shape = {
  fields: {
    name: text(512),
    organization: text(512),
    street_address: text(1024),
    locality: text(512),
    postal_code: text(512),
    country: (value) => typeof value === 'string' && COUNTRY.test(value),
    delivery_point_identifier: text(11),
  },
  required: ['country'],
};

const billingOptions: Shape = {
  fields: { period_length: oneOf(PERIOD_LENGTHS), period_start_day: dayOfPeriod, use_industry_billing: boolean },
  required: [],
};

const supplyAddress: Shape = {
  fields: {
    primary_place_of_residence_since: date,
    customer_at_supply_address_from_date: date,
    supply_postcode: text(10),
    supply_address1: text(512),
  },
  required: ['customer_at_supply_address_from_date', 'supply_postcode', 'supply_address1'],
};

const account: Shape = {
  fields: {
    import_supplier: text(255),
    external_account_number: text(128),
    unknown_occupier: boolean,
    customers: listOf(customer),
    billing_email: email,
    billing_name: text(510),
    billing_sub_name: text(256),
    billing_customer_reference: text(256),
    billing_address: object(billingAddress),
    account_billing_options: object(billingOptions),
    account_type: oneOf(ACCOUNT_TYPES),
    date_of_sale: date,
    sales_channel: text(255),
    sales_subchannel: text(255),
    communication_preference: oneOf(COMMUNICATION_PREFERENCES),
    document_accessibility: oneOf(DOCUMENT_ACCESSIBILITY),
    transfer_balance: amount,
    operations_team_name: text(255),
    supply_addresses: listOf(supplyAddress),
  },
  required: ['import_supplier', 'external_account_number'],
};

const documentPath: Shape = {
  fields: {
    document_path: (value) =>
      typeof value === 'string' && text(1024)(value) && documentPathProblem(value) === undefined,
  },
  required: ['document_path'],
};

const note: Shape = {
  fields: {
    body: text(10_000),
    document_paths: listOf(documentPath),
    created_at: datetime,
    is_pinned: boolean,
    unpin_at: datetime,
  },
  required: [],
};

const transaction: Shape = {
  fields: {
    transaction_id: text(255),
    transaction_date: date,
    amount,
    type: oneOf(TRANSACTION_TYPES),
    reason: text(255),
    reference: text(255),
    payment_type: oneOf(PAYMENT_TYPES),
    display_note: text(1000, 0),
    note: text(1000, 0),
    product_code: text(255),
  },
  required: ['transaction_id', 'transaction_date', 'amount', 'type'],
};

/** An account's request of post-import records (notesRequestSchema, transactionsRequestSchema in requests.ts). */
const recordsRequest = (list: string, item: Shape): Shape => ({
  fields: { import_supplier: text(255), external_account_number: text(128), [list]: listOf(item, 1) },
  required: ['import_supplier', 'external_account_number', list],
});
const notesRequest = recordsRequest('notes', note);
const transactionsRequest = recordsRequest('transactions', transaction);

/** True only when accountPayloadSchema accepts `payload` (false: ask the schema). */
export function accountPayloadFits(payload: unknown): boolean {
  return fits(payload, account);
}

/** True only when notesRequestSchema accepts `body` (false: ask the schema). */
export function notesRequestFits(body: unknown): boolean {
  return fits(body, notesRequest);
}

/** True only when transactionsRequestSchema accepts `body` (false: ask the schema). */
export function transactionsRequestFits(body: unknown): boolean {
  return fits(body, transactionsRequest);
}
