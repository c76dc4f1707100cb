import { describe, expect, it } from 'vitest';
import { duplicateCustomerWarnings } from '../../src/mapping/duplicate-customers.js';

// The same customer twice on one account: same given name, family name and date of birth, as a join that repeats a
// holder gives them. A warning at each line, naming the other.

const origin = (index: number) => ({ file: 'CIS.csv', line: 10 + index });
const ann = { given_name: 'Ann', family_name: 'Lee', date_of_birth: '1980-02-03' };

describe('the same customer twice on one account', () => {
  it('warns at both lines, each naming the other, regardless of case and spaces', () => {
    const warnings = duplicateCustomerWarnings(
      '00000042',
      [ann, { given_name: 'Bo', family_name: 'Lee', date_of_birth: '1980-02-03' }, { ...ann, family_name: ' LEE ' }],
      origin,
    );
    expect(warnings.map((warning) => [warning.file, warning.line, warning.attr, warning.code])).toEqual([
      ['CIS.csv', 10, 'customers.0', 'duplicate_customer'],
      ['CIS.csv', 12, 'customers.2', 'duplicate_customer'],
    ]);
    expect(warnings[0]?.message).toContain('customers.0 is the same customer as customers.2 (CIS.csv:12)');
    expect(warnings[1]?.message).toContain('customers.2 is the same customer as customers.0 (CIS.csv:10)');
    expect(warnings.every((warning) => warning.externalAccountNumber === '00000042')).toBe(true);
  });

  it('does not take two people without a date of birth, or of different birth dates, for one', () => {
    const { date_of_birth: _dob, ...noBirth } = ann;
    expect(duplicateCustomerWarnings('1', [noBirth, noBirth], origin)).toEqual([]);
    expect(duplicateCustomerWarnings('1', [ann, { ...ann, date_of_birth: '2010-02-03' }], origin)).toEqual([]);
    expect(duplicateCustomerWarnings('1', [ann], origin)).toEqual([]);
  });
});
