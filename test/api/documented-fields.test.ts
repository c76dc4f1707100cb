import { describe, expect, it } from 'vitest';
import { undocumentedFields } from '../../src/api/documented-fields.js';
import { accountPayloadSchema, notesRequestSchema, transactionsRequestSchema } from '../../src/schema/index.js';

describe('undocumentedFields: only documented fields may be sent (spec)', () => {
  it.each([
    [
      'a valid payload',
      accountPayloadSchema,
      { import_supplier: 'A', customers: [{ given_name: 'x', customer_preferences: { opted_into_sms: true } }] },
      [],
    ],
    // field values are not judged here: the service judges them
    ['bad values, documented keys', accountPayloadSchema, { import_supplier: 42, customers: [{ mobile: 'abc' }] }, []],
    ['top level', accountPayloadSchema, { import_supplier: 'A', colour: 'blue' }, ['colour']],
    [
      'in an array item',
      accountPayloadSchema,
      { customers: [{}, { given_name: 'x', shoe_size: 9 }] },
      ['customers.1.shoe_size'],
    ],
    [
      'nested optional object',
      accountPayloadSchema,
      { customers: [{ customer_preferences: { opted_into_spam: true } }] },
      ['customers.0.customer_preferences.opted_into_spam'],
    ],
    [
      'metadata values are free JSON',
      accountPayloadSchema,
      { metadata: [{ key: 'k', value: { anything: { goes: 1 } } }] },
      [],
    ],
    [
      'note item',
      notesRequestSchema,
      { import_supplier: 'A', external_account_number: 'x', notes: [{ body: 'b', external_id: '1' }] },
      ['notes.0.external_id'],
    ],
    [
      'line item of a transaction',
      transactionsRequestSchema,
      { transactions: [{ line_items: [{ rate_band: 'x', params: {} }] }] },
      ['transactions.0.line_items.0.params'],
    ],
    ['not an object at all', notesRequestSchema, 'text', []],
  ] as const)('%s', (_name, schema, value, attrs) => {
    const issues = undocumentedFields(schema, value);
    expect(issues.map((issue) => issue.attr)).toEqual(attrs);
    expect(issues.every((issue) => issue.code === 'unknown_field')).toBe(true);
  });
});
