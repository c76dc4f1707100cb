import { describe, expect, it } from 'vitest';
import { parseDateFormat } from '../../src/mapping/date-format.js';
import type { FileMapping } from '../../src/mapping/mapping-rules.js';
import { fileMapping as mapping } from './helpers/file-mapping.js';
import { coerceValue } from '../../src/mapping/coerce.js';
import type { FieldType } from '../../src/mapping/fields.js';
import { NUMBER_MARK } from '../../src/sources/json-value.js';

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
    // A negative scale flips a legacy sign convention (+ means the customer owes), exactly.
    expect(coerce('amount', '1529', { scale: { f: -0.01 } })).toEqual({ value: -15.29 });
    expect(coerce('amount', '-1200', { scale: { f: -0.01 } })).toEqual({ value: 12 });
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
    expect(coerce('phone', '+12', {}, 'GB')).toEqual({ value: '+12' });
  });

  it('names the default country when a national number is not valid there', () => {
    const bad = coerce('phone', '0161 12', {}, 'GB');
    expect(bad.value).toBe('0161 12');
    expect(bad.issue?.code).toBe('invalid_phone_number');
    expect(bad.issue?.message).toMatch(/^f: "0161 12" is not a valid GB number \(a number without \+ is read as a GB/);
  });
});

describe('numbers exactly as the export holds them (docs/export-format.md "How numbers are read")', () => {
  /** A JSON number as the JSON readers give it: its source text, marked. */
  const json = (text: string): string => `${NUMBER_MARK}${text}`;

  it('a JSON number in a text field keeps its digits: 1.10 is "1.10", 20 digits stay 20 digits', () => {
    expect(coerce('string', json('1.10'))).toEqual({ value: '1.10' });
    expect(coerce('string', json('90000000000000000001'))).toEqual({ value: '90000000000000000001' });
    expect(coerce('string', json('90000000000000000000'))).toEqual({ value: '90000000000000000000' });
    expect(coerce('string', json('1e3'))).toEqual({ value: '1e3' });
    // CSV cells are text already: the same digits.
    expect(coerce('string', '00123')).toEqual({ value: '00123' });
    expect(coerce('string', '1.10')).toEqual({ value: '1.10' });
  });

  it('a number is sent only where the JSON number carrying it is the same number', () => {
    expect(coerce('amount', json('12.50'))).toEqual({ value: 12.5 });
    expect(coerce('amount', json('-0'))).toEqual({ value: 0 });
    expect(coerce('amount', json('1E+2'))).toEqual({ value: 100 });
    expect(coerce('amount', json('123456789012345.6'))).toEqual({ value: 123456789012345.6 });
    for (const input of [json('1e309'), json('-1e309'), json('1e99999999999999999999')]) {
      const beyond = coerce('amount', input);
      expect(beyond.issue?.code, input).toBe('number_out_of_range');
      expect(beyond.value, input).toBe(input.slice(1));
    }
    expect(coerce('amount', json('1e309')).issue?.message).toBe(
      'f: 1e309 is beyond the largest number a JSON number carries (about 1.8e308); it cannot be sent.',
    );
    const precise = coerce('number', json('90000000000000000001'));
    expect(precise.issue?.code).toBe('number_too_precise');
    expect(precise.issue?.message).toBe(
      'f: 90000000000000000001 has more significant digits than a JSON number carries exactly: it would arrive ' +
        'as 90000000000000000000; give at most 15 significant digits.',
    );
    expect(coerce('amount', json('0.1000000000000000055511151231257827')).issue?.code).toBe('number_too_precise');
    expect(coerce('amount', json('1e-400')).issue?.code).toBe('number_too_precise');
    // A CSV cell is checked the same way.
    expect(coerce('amount', '90000000000000000001').issue?.code).toBe('number_too_precise');
    expect(coerce('amount', '12345678901234567.89').issue?.code).toBe('number_too_precise');
    expect(coerce('amount', '9'.repeat(400)).issue?.code).toBe('number_out_of_range');
    expect(coerce('integer', json('1.5')).issue?.code).toBe('invalid_integer');
    expect(coerce('integer', json('3.0'))).toEqual({ value: 3 });
  });

  it('scales exactly (decimal arithmetic, not binary), and refuses a product a JSON number cannot carry', () => {
    expect(coerce('amount', json('1234'), { scale: { f: 0.01 } })).toEqual({ value: 12.34 });
    expect(coerce('amount', '0.29', { scale: { f: 100 } })).toEqual({ value: 29 });
    expect(coerce('amount', '123456789.123456789', { scale: { f: 0.01 } }).issue?.code).toBe('number_too_precise');
    expect(coerce('amount', json('1e308'), { scale: { f: 100 } }).issue?.message).toContain(
      "after the mapping file's scale of 100",
    );
  });

  it('gross_amount from a JSON number: on its text, exponents included, beyond a safe integer refused', () => {
    expect(coerce('minor-amount', json('40.10'))).toEqual({ value: 4010 });
    expect(coerce('minor-amount', json('4.01e1'))).toEqual({ value: 4010 });
    expect(coerce('minor-amount', json('1e309')).issue?.code).toBe('number_out_of_range');
    expect(coerce('minor-amount', json('40.105')).issue?.code).toBe('too_many_decimal_places');
  });

  it('a JSON number as a boolean, a date or a phone number', () => {
    expect(coerce('boolean', json('1.0'))).toEqual({ value: true });
    expect(coerce('boolean', json('0'))).toEqual({ value: false });
    expect(coerce('boolean', json('2')).issue?.message).toContain('"2" is not a boolean');
    expect(coerce('date', json('20240101')).issue?.message).toContain('"20240101" is not a date');
    expect(coerce('phone', json('447911123456')).issue?.code).toBe('invalid_type');
  });

  it('numbers inside JSON fields: sent as JSON numbers where exact, else an error naming the place', () => {
    expect(coerce('json-array', [{ key: 'a', value: { n: json('1.10'), s: '1.10' } }])).toEqual({
      value: [{ key: 'a', value: { n: 1.1, s: '1.10' } }],
    });
    const beyond = coerce('json-array', [{ key: 'a', value: { n: json('1e309') } }]);
    expect(beyond.issue).toEqual({
      code: 'number_out_of_range',
      message:
        'f.0.value.n: 1e309 is beyond the largest number a JSON number carries (about 1.8e308); it cannot be sent as it is.',
    });
    // JSON text in a CSV cell is read by the same parser: digits kept, a repeated key refused.
    expect(coerce('json', '{"n": 90000000000000000001}').issue?.code).toBe('number_too_precise');
    const repeated = coerce('json', '{"n": 1, "n": 2}');
    expect(repeated.issue?.code).toBe('invalid_json');
    expect(repeated.issue?.message).toContain('the key "n" twice in one object');
    expect(coerce('document-paths', [json('5'), 'a.pdf'])).toEqual({ value: [5, { document_path: 'a.pdf' }] });
  });
});
