import { describe, expect, it } from 'vitest';
import {
  fieldProblems,
  fileMappingSchema,
  type FileMappingInput,
  type MappingFileInput,
} from '../../src/mapping/mapping-file.js';
import { exportMappingOf } from '../../src/mapping/mapping-rules.js';
import { mapCsvRow, planFile } from '../../src/mapping/record.js';
import { readFormattedNumber } from '../../src/mapping/number-format.js';
import type { FileKind } from '../../src/sources/kinds.js';

// The mapping file's per-kind options on plain records (docs/export-format.md "The mapping file"): what a row's cells
// become under them, and the configuration errors that name the key at fault.

function mapRow(kind: FileKind, mapping: FileMappingInput, header: string[], cells: string[], file?: MappingFileInput) {
  const config = exportMappingOf({ ...file, mapping: { [kind]: mapping } }, 'ACME', undefined);
  return mapCsvRow(planFile(kind, `${kind}.csv`, header, config), 2, cells);
}

describe('value maps: exact, then regardless of case, then "*"', () => {
  const values = { account_type: { D: 'DOMESTIC', d: 'DOMESTIC', Biz: 'BUSINESS', '*': 'BUSINESS' } };
  const typeOf = (cell: string) =>
    mapRow('accounts', { values }, ['external_account_number', 'account_type'], ['A', cell]).fields['account_type'];

  it('matches exactly first, then regardless of case, then takes the default; an empty cell stays empty', () => {
    expect(typeOf('D')).toBe('DOMESTIC');
    expect(typeOf(' biz ')).toBe('BUSINESS');
    expect(typeOf('BIZ')).toBe('BUSINESS');
    expect(typeOf('X')).toBe('BUSINESS');
    expect(typeOf('')).toBeUndefined();
    const noDefault = mapRow(
      'accounts',
      { values: { account_type: { d: 'DOMESTIC' } } },
      ['external_account_number', 'account_type'],
      ['A', 'Q'],
    );
    expect(noDefault.fields['account_type']).toBe('Q');
  });

  it('refuses a value the map does not name, no "*" covers and the field does not take, quoting it and the map', () => {
    const values = { account_type: { DOM: 'DOMESTIC' }, communication_preference: { Y: 'ONLINE' } };
    const row = mapRow(
      'accounts',
      { values },
      ['external_account_number', 'account_type', 'communication_preference'],
      ['A', ' NDOM ', 'EMAIL'],
    );
    expect(row.issues).toEqual([
      {
        attr: 'account_type',
        column: 'account_type',
        code: 'invalid_choice',
        message: expect.stringMatching(
          /^"NDOM" is not named by the value map mapping\.accounts\.values\.account_type \("DOM"\), and the map has no "\*".*Invalid option "NDOM": expected one of "DOMESTIC"/,
        ) as string,
      },
      expect.objectContaining({ attr: 'communication_preference', message: expect.stringContaining('"EMAIL"') }),
    ]);
    // A value the field takes as it is goes as it is; so does one a "*" covers.
    expect(
      mapRow('accounts', { values }, ['external_account_number', 'account_type'], ['A', 'BUSINESS']).issues,
    ).toEqual([]);
  });

  it('refuses two keys equal but for case that map to different values, naming the key', () => {
    expect(fieldProblems('accounts', { values: { account_type: { Y: 'DOMESTIC', y: 'BUSINESS' } } })).toEqual([
      {
        key: 'mapping.accounts.values.account_type',
        message: '"Y" and "y" differ only in case but map to different values (keys match regardless of case)',
      },
    ]);
    expect(fieldProblems('accounts', { values: { account_type: { Y: 'DOMESTIC', y: 'DOMESTIC' } } })).toEqual([]);
  });
});

describe('one source column feeding several fields', () => {
  it('fills each field from the column, and names the column for each', () => {
    const config = exportMappingOf(
      { mapping: { customers: { rename: { PHONE: ['mobile', 'landline'], REF: 'external_account_number' } } } },
      'ACME',
      undefined,
    );
    const plan = planFile('customers', 'customers.csv', ['REF', 'PHONE'], config);
    expect(plan.columnOf).toEqual({ external_account_number: 'REF', mobile: 'PHONE', landline: 'PHONE' });
    expect(mapCsvRow(plan, 2, ['A', '+447911123456']).fields).toEqual({
      mobile: '+447911123456',
      landline: '+447911123456',
    });
  });

  it('refuses a field filled twice and an undocumented target, naming the key', () => {
    expect(fieldProblems('customers', { rename: { PHONE: ['mobile', 'landline'], MOB: 'mobile' } })).toEqual([
      { key: 'mapping.customers.rename', message: 'two columns are renamed to "mobile"' },
    ]);
    expect(fieldProblems('customers', { rename: { PHONE: ['mobile', 'fax'] } })).toEqual([
      { key: 'mapping.customers.rename.PHONE', message: '"fax" is not a documented field of customers files' },
    ]);
  });
});

describe('"unmapped": "ignore"', () => {
  it('leaves undocumented columns out of the row and lists them once in the plan, not as unknown columns', () => {
    const config = exportMappingOf({ mapping: { notes: { unmapped: 'ignore' } } }, 'ACME', undefined);
    const plan = planFile('notes', 'notes.csv', ['external_account_number', 'body', 'OLD', 'OLD2'], config);
    expect(plan.unknownColumns).toEqual([]);
    expect(plan.unmappedIgnored).toEqual(['OLD', 'OLD2']);
    expect(mapCsvRow(plan, 2, ['A', 'hello', 'x', 'y']).fields).toEqual({ body: 'hello' });
    const reported = planFile(
      'notes',
      'notes.csv',
      ['external_account_number', 'OLD'],
      exportMappingOf({}, 'A', undefined),
    );
    expect(reported.unknownColumns).toEqual(['OLD']);
  });
});

describe('number_format: currency sign, thousands separator, where the minus goes', () => {
  it.each([
    ['£152.85', 'leading', '152.85'],
    ['-£12.00', 'leading', '-12.00'],
    ['£-12.00', 'leading', '-12.00'],
    ['£1,234.50', 'leading', '1234.50'],
    ['1,234,567', 'leading', '1234567'],
    ['12.00-', 'trailing', '-12.00'],
    ['£12.00-', 'trailing', '-12.00'],
    ['(12.00)', 'parentheses', '-12.00'],
    ['(£1,000)', 'any', '-1000'],
    ['-3', 'any', '-3'],
    ['7-', 'any', '-7'],
    ['+£3', 'leading', '3'],
  ] as const)('%s (negative %s) reads as %s', (cell, negative, plain) => {
    expect(readFormattedNumber(cell, { currency: '£', thousands: ',', negative })).toBe(plain);
  });

  it.each([
    ['1,23.4', 'any'],
    ['££12', 'any'],
    ['$12', 'any'],
    ['12.00-', 'leading'],
    ['(12.00)', 'trailing'],
    ['-12.00', 'parentheses'],
    ['-(12)', 'any'],
    ['--12', 'any'],
    ['12,000.5.1', 'any'],
    ['1 000', 'any'],
    ['', 'any'],
  ] as const)('%s (negative %s) is not a number in the format', (cell, negative) => {
    expect(readFormattedNumber(cell, { currency: '£', thousands: ',', negative })).toBeUndefined();
  });

  it('reads amounts and minor units exactly, and names the value and the format when a cell does not fit', () => {
    const number_format = { currency: '£', thousands: ',', negative: 'any' } as const;
    const statement = mapRow(
      'statements',
      { number_format },
      ['external_account_number', 'gross_amount'],
      ['A', '(£1,152.85)'],
    );
    expect(statement.fields['gross_amount']).toBe(-115285);
    const transaction = mapRow(
      'transactions',
      { number_format, scale: { amount: -1 } },
      ['external_account_number', 'amount'],
      ['A', '£0.29-'],
    );
    expect(transaction.fields['amount']).toBe(0.29);
    const bad = mapRow('transactions', { number_format }, ['external_account_number', 'amount'], ['A', '€12']);
    expect(bad.issues).toEqual([
      {
        attr: 'amount',
        column: 'amount',
        code: 'invalid_number',
        message:
          'amount: "€12" is not a number in the mapping file\'s number_format (currency "£", thousands ",", ' +
          'negative any; "." as the decimal point).',
      },
    ]);
  });
});

describe('timezone: local datetimes in a named zone, across both 2026 UK clock changes', () => {
  const notes = (cell: string, mapping: FileMappingInput = {}) =>
    mapRow(
      'notes',
      { timezone: 'Europe/London', datetime_format: ['DD/MM/YYYY HH:mm'], ...mapping },
      ['external_account_number', 'body', 'created_at'],
      ['A', 'x', cell],
    );

  it('gives each local time the offset it had: GMT in winter, BST in summer', () => {
    expect(notes('28/03/2026 23:59').fields['created_at']).toBe('2026-03-28T23:59:00+00:00');
    expect(notes('29/03/2026 00:59').fields['created_at']).toBe('2026-03-29T00:59:00+00:00');
    expect(notes('29/03/2026 02:00').fields['created_at']).toBe('2026-03-29T02:00:00+01:00');
    expect(notes('15/07/2026 12:00').fields['created_at']).toBe('2026-07-15T12:00:00+01:00');
    expect(notes('25/10/2026 00:59').fields['created_at']).toBe('2026-10-25T00:59:00+01:00');
    expect(notes('25/10/2026 02:00').fields['created_at']).toBe('2026-10-25T02:00:00+00:00');
    expect(notes('2026-12-01T08:15').fields['created_at']).toBe('2026-12-01T08:15:00+00:00');
    // A datetime with its offset is taken as it is.
    expect(notes('2026-10-25T01:30:00+01:00').fields['created_at']).toBe('2026-10-25T01:30:00+01:00');
  });

  it('refuses a local time the clocks skipped (29 March, 01:00-01:59)', () => {
    const gap = notes('29/03/2026 01:30');
    expect(gap.issues.map((issue) => [issue.code, issue.message])).toEqual([
      [
        'invalid_datetime',
        'created_at: "29/03/2026 01:30" is a local time that does not exist in Europe/London (the clocks went ' +
          'forward past it); correct it, or give it with its UTC offset.',
      ],
    ]);
  });

  it('refuses a local time that occurs twice (25 October, 01:00-01:59) unless dst says which', () => {
    const twice = notes('25/10/2026 01:30');
    expect(twice.issues[0]?.code).toBe('ambiguous_date');
    expect(twice.issues[0]?.message).toContain('2026-10-25T01:30:00+01:00 or 2026-10-25T01:30:00+00:00');
    expect(notes('25/10/2026 01:30', { dst: 'earlier' }).fields['created_at']).toBe('2026-10-25T01:30:00+01:00');
    expect(notes('25/10/2026 01:30', { dst: 'later' }).fields['created_at']).toBe('2026-10-25T01:30:00+00:00');
    expect(notes('25/10/2026 01:59', { dst: 'later' }).issues).toEqual([]);
  });

  it('is exclusive with utc_offset, dst needs it, and an unknown zone is named', () => {
    expect(fieldProblems('notes', { timezone: 'Europe/London', utc_offset: 'Z' })[0]?.key).toBe(
      'mapping.notes.timezone',
    );
    expect(fieldProblems('notes', { dst: 'later' })[0]?.key).toBe('mapping.notes.dst');
    expect(fieldProblems('notes', { datetime_format: ['DD/MM/YYYY HH:mm'], timezone: 'Europe/London' })).toEqual([]);
    expect(fileMappingSchema.safeParse({ timezone: 'Europe/Lodnon' }).error?.issues[0]?.message).toMatch(
      /^timezone must be an IANA time zone such as "Europe\/London"/u,
    );
  });
});

describe('on_invalid: omit', () => {
  const header = ['external_account_number', 'given_name', 'landline', 'email', 'mobile'];
  const mapping: FileMappingInput = { on_invalid: { landline: 'omit', email: 'omit' } };

  it('drops a value that cannot be read or that the spec refuses, noting each with its value and why', () => {
    const row = mapRow('customers', mapping, header, ['A', 'Ada', '0161 12', 'not-an-email', '+44791112'], {
      phone_default_country: 'GB',
    });
    expect(row.fields).toEqual({ given_name: 'Ada', mobile: '+44791112' });
    expect(row.issues).toEqual([]);
    expect(row.omitted.map((dropped) => [dropped.attr, dropped.column, dropped.value, dropped.code])).toEqual([
      ['landline', 'landline', '0161 12', 'invalid_phone_number'],
      ['email', 'email', 'not-an-email', 'invalid_email'],
    ]);
    const international = mapRow('customers', mapping, header, ['A', 'Ada', '+441', '', '']);
    expect(international.fields).toEqual({ given_name: 'Ada' });
    expect(international.omitted[0]?.message).toBe(
      '+441 is not a valid phone number in international format (e.g. +447911123456).',
    );
  });

  it('keeps a valid value, and leaves the fields it does not name to the usual rules', () => {
    const row = mapRow('customers', mapping, header, ['A', 'Ada', '+447911123456', 'ada@example.org', '']);
    expect(row.fields).toEqual({ given_name: 'Ada', landline: '+447911123456', email: 'ada@example.org' });
    expect(row.omitted).toEqual([]);
  });

  it('is refused for a required field and an undocumented one, naming the key', () => {
    expect(fieldProblems('supply_addresses', { on_invalid: { supply_postcode: 'omit' } })).toEqual([
      {
        key: 'mapping.supply_addresses.on_invalid.supply_postcode',
        message:
          '"supply_postcode" is required in supply_addresses records, so it cannot be omitted; only an optional ' +
          "field's invalid value may be dropped",
      },
    ]);
    expect(fieldProblems('accounts', { on_invalid: { customers: 'omit' } })[0]?.message).toMatch(
      /^an inline list cannot be omitted whole/u,
    );
    expect(fieldProblems('customers', { on_invalid: { fax: 'omit' } })[0]?.key).toBe(
      'mapping.customers.on_invalid.fax',
    );
    expect(fieldProblems('notes', { on_invalid: { external_account_number: 'omit' } })[0]?.key).toBe(
      'mapping.notes.on_invalid.external_account_number',
    );
  });
});
