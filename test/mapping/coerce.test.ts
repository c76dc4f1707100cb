import { describe, expect, it } from 'vitest';
import { parseDateFormat } from '../../src/mapping/date-format.js';
import type { FileMapping } from '../../src/mapping/mapping-rules.js';
import { coerceValue } from '../../src/mapping/coerce.js';
import type { FieldType } from '../../src/mapping/fields.js';

function mapping(overrides: Partial<FileMapping> = {}): FileMapping {
  return {
    rename: {},
    ignore: [],
    constants: {},
    defaults: {},
    values: {},
    dateFormats: [],
    datetimeFormats: [],
    utcOffset: undefined,
    scale: {},
    minorUnits: [],
    delimiter: ',',
    encoding: 'utf8',
    ...overrides,
  };
}

const formats = (...sources: string[]) =>
  sources.map((source) => parseDateFormat(source, source.includes('HH')).format!);

function coerce(type: FieldType, value: unknown, overrides: Partial<FileMapping> = {}, phoneCountry?: 'GB') {
  return coerceValue(type, value, { mapping: mapping(overrides), field: 'f', phoneCountry });
}

describe('coercing cells (docs/export-format.md "Values")', () => {
  it('reads booleans in any case, and refuses anything else', () => {
    for (const text of ['true', 'TRUE', '1', 'yes', 'Y']) expect(coerce('boolean', text)).toEqual({ value: true });
    for (const text of ['false', '0', 'No', 'n']) expect(coerce('boolean', text)).toEqual({ value: false });
    expect(coerce('boolean', 'maybe').issue?.code).toBe('invalid_boolean');
  });

  it('reads numbers with "." only, scales amounts without float noise, and keeps integers whole', () => {
    expect(coerce('amount', ' 12.50 ')).toEqual({ value: 12.5 });
    expect(coerce('amount', '-1234', { scale: { f: 0.01 } })).toEqual({ value: -12.34 });
    expect(coerce('amount', '1,50').issue?.code).toBe('invalid_number');
    expect(coerce('amount', '£3').issue?.code).toBe('invalid_number');
    expect(coerce('integer', '1.5').issue?.code).toBe('invalid_integer');
    expect(coerce('integer', 7)).toEqual({ value: 7 });
  });

  it('converts gross_amount from major to minor units exactly, on the text (never 4009 or 28)', () => {
    const cases: Array<[unknown, number]> = [
      ['40.10', 4010],
      ['0.29', 29],
      ['40.5', 4050],
      ['12', 1200],
      ['-0.07', -7],
      ['1.15', 115],
      ['4.35', 435],
      ['.5', 50],
      [40.1, 4010],
      [0.29, 29],
      ['90071992547409.91', 9007199254740991],
    ];
    for (const [input, minor] of cases) expect(coerce('minor-amount', input), String(input)).toEqual({ value: minor });
    const precise = coerce('minor-amount', '40.105');
    expect(precise.issue?.code).toBe('too_many_decimal_places');
    expect(precise.issue?.message).toContain('more than two decimal places');
    expect(coerce('minor-amount', '40,10').issue?.code).toBe('invalid_number');
    const beyond = coerce('minor-amount', '90071992547409.92');
    expect(beyond.issue?.code).toBe('number_out_of_range');
    expect(beyond.issue?.message).toContain('beyond 9007199254740991 minor units');
  });

  it('takes a gross_amount column declared in minor_units as it is, and refuses a fraction there', () => {
    expect(coerce('minor-amount', '4010', { minorUnits: ['f'] })).toEqual({ value: 4010 });
    expect(coerce('minor-amount', '40.10', { minorUnits: ['f'] }).issue?.code).toBe('invalid_integer');
  });

  it('reads declared date formats, refuses impossible dates and ambiguous ones, never guesses', () => {
    expect(coerce('date', '2024-02-29')).toEqual({ value: '2024-02-29' });
    expect(coerce('date', '2023-02-29').issue?.code).toBe('invalid_date');
    expect(coerce('date', '28/02/2023').issue?.message).toContain('declare other formats with "date_format"');
    expect(coerce('date', '28/02/2023', { dateFormats: formats('DD/MM/YYYY') })).toEqual({ value: '2023-02-28' });
    expect(coerce('date', '1/2/2023', { dateFormats: formats('D/M/YYYY') })).toEqual({ value: '2023-02-01' });
    expect(coerce('date', '31/02/2023', { dateFormats: formats('DD/MM/YYYY') }).issue?.message).toContain(
      'is not a date that exists',
    );
    const both = formats('DD/MM/YYYY', 'MM/DD/YYYY');
    expect(coerce('date', '13/02/2023', { dateFormats: both })).toEqual({ value: '2023-02-13' });
    const ambiguous = coerce('date', '03/04/2023', { dateFormats: both });
    expect(ambiguous.issue?.code).toBe('ambiguous_date');
    expect(ambiguous.issue?.message).toContain('2023-04-03 or 2023-03-04');
  });

  it('reads ISO datetimes with an offset, and declared formats with the declared offset', () => {
    expect(coerce('datetime', '2024-01-31T09:30:00+01:00')).toEqual({ value: '2024-01-31T09:30:00+01:00' });
    expect(coerce('datetime', '2024-01-31 09:30').issue?.code).toBe('invalid_datetime');
    expect(
      coerce('datetime', '31/01/2024 09:30', { datetimeFormats: formats('DD/MM/YYYY HH:mm'), utcOffset: 'Z' }),
    ).toEqual({ value: '2024-01-31T09:30:00Z' });
    expect(
      coerce('datetime', '31/01/2024 25:30', { datetimeFormats: formats('DD/MM/YYYY HH:mm'), utcOffset: 'Z' }).issue
        ?.code,
    ).toBe('invalid_datetime');
    const both = { datetimeFormats: formats('DD/MM/YYYY HH:mm', 'MM/DD/YYYY HH:mm'), utcOffset: 'Z' };
    expect(coerce('datetime', '13/02/2024 10:00', both)).toEqual({ value: '2024-02-13T10:00:00Z' });
    const ambiguous = coerce('datetime', '01/02/2024 10:00', both);
    expect(ambiguous.issue?.code).toBe('ambiguous_date');
    expect(ambiguous.issue?.message).toContain('2024-02-01T10:00:00Z or 2024-01-02T10:00:00Z');
  });

  it('reads JSON cells and document paths', () => {
    expect(coerce('json-array', '[{"key": "a", "value": {}}]')).toEqual({ value: [{ key: 'a', value: {} }] });
    expect(coerce('json-array', '{"a": 1}').issue?.code).toBe('invalid_type');
    expect(coerce('json', '{bad').issue?.code).toBe('invalid_json');
    expect(coerce('document-paths', 'a.pdf; b/c.pdf')).toEqual({
      value: [{ document_path: 'a.pdf' }, { document_path: 'b/c.pdf' }],
    });
    expect(coerce('document-paths', '["x.pdf"]')).toEqual({ value: [{ document_path: 'x.pdf' }] });
  });

  it('makes national phone numbers international for the declared country only, and leaves the rest to the schema', () => {
    expect(coerce('phone', '07911 123456', {}, 'GB')).toEqual({ value: '+447911123456' });
    expect(coerce('phone', '07911 123456')).toEqual({ value: '07911 123456' });
    expect(coerce('phone', '12', {}, 'GB')).toEqual({ value: '12' });
  });
});
