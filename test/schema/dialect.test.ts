import { describe, expect, it } from 'vitest';
import { decimalText, moneyFromStrings, moneyToStrings } from '../../src/schema/index.js';

// Money in the kraken dialect: decimal strings in the real platform's precision, never rounded.

const transaction = {
  transaction_id: 'T-1',
  amount: 40.1,
  type: 'SUPPLY_CHARGE',
  line_items: [{ number_of_units: 12.5, net_amount: 3.1, price_per_unit: 0.2481234, units: [100, 112.5] }],
  tax_items: [{ amount: 0.16, tax_type: 'VAT', value_taxed: 3.1, rate: 0.05, unit_type: 'PROPORTION' }],
};

describe('money as decimal strings', () => {
  it('writes each field with its precision: amounts 2, units 4, price per unit 7, tax rate and value 5', () => {
    const { value, issues } = moneyToStrings('transactions', { transactions: [transaction] });
    expect(issues).toEqual([]);
    expect(value).toEqual({
      transactions: [
        {
          ...transaction,
          amount: '40.10',
          line_items: [
            {
              number_of_units: '12.5000',
              net_amount: '3.10',
              price_per_unit: '0.2481234',
              units: ['100.0000', '112.5000'],
            },
          ],
          tax_items: [{ ...transaction.tax_items[0], amount: '0.16', value_taxed: '3.10000', rate: '0.05000' }],
        },
      ],
    });
  });

  it('covers the account payload: transfer balance, ledger balances and their transactions; gross_amount is not money here', () => {
    const body = {
      payload: {
        transfer_balance: -0.29,
        ledgers: [{ ledger_code: 'L', ledger_balance: 1, current_statement_transactions: [{ amount: 2.5 }] }],
        statements: [{ gross_amount: 4010 }],
      },
    };
    expect(moneyToStrings('account', body).value).toEqual({
      payload: {
        transfer_balance: '-0.29',
        ledgers: [{ ledger_code: 'L', ledger_balance: '1.00', current_statement_transactions: [{ amount: '2.50' }] }],
        statements: [{ gross_amount: 4010 }],
      },
    });
  });

  it('refuses a value with more places than the field takes, naming it relative to the payload', () => {
    const { issues } = moneyToStrings('account', { payload: { transfer_balance: 1.005 } });
    expect(issues).toEqual([expect.objectContaining({ attr: 'transfer_balance', code: 'max_decimal_places' })]);
    expect(decimalText(1e-7, 7)).toBe('0.0000001');
    expect(decimalText(1e21, 2)).toBe('1000000000000000000000.00');
    expect(decimalText(0.1 + 0.2, 2)).toBeUndefined();
  });

  it("refuses a value with more digits before the point than the platform's pattern, which it would refuse", () => {
    const { issues } = moneyToStrings('transactions', {
      transactions: [{ amount: 9999999999.99 }, { amount: -12345678901 }, { amount: 0.5 }],
    });
    expect(issues).toEqual([
      {
        attr: 'transactions.1.amount',
        code: 'max_whole_digits',
        detail:
          '-12345678901.00 has more than 10 digits before the decimal point; the platform takes at most 10 for this field.',
      },
    ]);
  });

  it('reads them back (the sandbox), refusing JSON numbers and strings outside the pattern', () => {
    const written = moneyToStrings('transactions', { transactions: [transaction] }).value;
    expect(moneyFromStrings('transactions', written)).toEqual({ value: { transactions: [transaction] }, issues: [] });
    const { issues } = moneyFromStrings('transactions', {
      transactions: [{ amount: 4 }, { amount: '1.2.3' }, { amount: '12345678901' }],
    });
    expect(issues.map((issue) => `${issue.attr}:${issue.code}`)).toEqual([
      'transactions.0.amount:invalid',
      'transactions.1.amount:invalid',
      'transactions.2.amount:invalid',
    ]);
  });
});
