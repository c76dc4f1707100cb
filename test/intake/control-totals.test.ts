import { describe, expect, it } from 'vitest';
import { controlMismatches, LedgerTally, StageTally } from '../../src/intake/control-totals.js';
import type { KindTotal } from '../../src/ledger/index.js';

// The sums of the control totals (docs/control-totals.md), pure: what each kind carries, in the platform's sign, and
// the lines that name the numbers that do not agree from one stage to the next.

describe('control totals', () => {
  it("sums each kind's money exactly, transactions signed by type as the balance moves", () => {
    const transactions = new StageTally('transactions');
    transactions.add({ type: 'CHARGE', amount: 1229.65 });
    transactions.add({ type: 'PAYMENT', amount: 0.1 });
    transactions.add({ type: 'CREDIT', amount: 0.2 });
    transactions.add({ type: 'REPAYMENT', amount: 12 });
    expect(transactions.records).toBe(4);
    expect(transactions.money()).toEqual({ amount: '1241.95', net_amount: '-1241.35' });
    // A credit note sent as a charge: the same amount, a net that moves the other way.
    const misread = new StageTally('transactions');
    misread.add({ type: 'CHARGE', amount: 50 });
    const right = new StageTally('transactions');
    right.add({ type: 'CREDIT', amount: 50 });
    expect([misread.money()['net_amount'], right.money()['net_amount']]).toEqual(['-50.00', '50.00']);

    const accounts = new StageTally('accounts');
    accounts.add({
      transfer_balance: -154.23,
      ledgers: [
        { ledger_balance: -100.5, last_statement_balance: -80 },
        { ledger_balance: -53.73, last_statement_balance: 0.01 },
      ],
    });
    accounts.add({ transfer_balance: 'not a number' });
    expect(accounts.money()).toEqual({
      transfer_balance: '-154.23',
      ledger_balance: '-154.23',
      last_statement_balance: '-79.99',
    });
    // A statement's gross_amount is in minor units in the payload: summed in major units.
    const statements = new StageTally('statements');
    statements.add({ gross_amount: 120450 });
    statements.add({ gross_amount: -1200 });
    expect(statements.money()).toEqual({ gross_amount: '1192.50' });
    expect(new StageTally('notes').money()).toEqual({});
  });

  it('counts customers and supply addresses inside their account, and records by their kind', () => {
    const tally = new LedgerTally();
    const payload = { transfer_balance: 10, customers: [{}, {}], supply_addresses: [{}] };
    tally.account(payload, { sent: true, accepted: false });
    tally.item('payment_instruction', { reference: 'X' }, { sent: true, accepted: true });
    const of = (kind: string, stage: string) =>
      tally.totals().find((total) => total.kind === kind && total.stage === stage)?.records;
    expect([of('accounts', 'sent'), of('accounts', 'accepted')]).toEqual([1, 0]);
    expect([of('customers', 'sent'), of('supply_addresses', 'sent')]).toEqual([2, 1]);
    expect([of('payment_instructions', 'sent'), of('payment_instructions', 'accepted')]).toEqual([1, 1]);
  });

  it("counts and sums the transactions inside an account's ledgers, historical and current, beside the account", () => {
    const tally = new LedgerTally();
    const ledger = (historical: unknown[], current: unknown[]) => ({
      ledger_balance: 0,
      historical_statement_transactions: historical,
      current_statement_transactions: current,
    });
    tally.account(
      {
        ledgers: [
          ledger(
            [
              { type: 'CHARGE', amount: 30.5 },
              { type: 'PAYMENT', amount: 30.5 },
            ],
            [{ type: 'CHARGE', amount: 9 }],
          ),
          ledger(
            [],
            [
              { type: 'CREDIT', amount: 1.25 },
              { type: 'SOMETHING', amount: 2 },
            ],
          ),
        ],
      },
      { sent: true, accepted: true },
    );
    const at = (kind: string) => tally.totals().find((total) => total.kind === kind && total.stage === 'accepted');
    expect(at('historical_statement_transactions')).toMatchObject({
      records: 2,
      money: { amount: '61.00', net_amount: '0.00' },
    });
    // A type the balance rules do not know is counted and in amount, not in net_amount.
    expect(at('current_statement_transactions')).toMatchObject({
      records: 3,
      money: { amount: '12.25', net_amount: '-7.75' },
    });
    // Nothing went through the transactions endpoint.
    expect(at('transactions')).toMatchObject({ records: 0 });
    expect(tally.totals().map((total) => total.kind)).toEqual(
      [
        'accounts',
        'historical_statement_transactions',
        'current_statement_transactions',
        'customers',
        'supply_addresses',
        'notes',
        'transactions',
        'statements',
        'payment_instructions',
      ].flatMap((kind) => [kind, kind]),
    );
  });

  it('names every number that must agree and does not, and nothing else', () => {
    const total = (stage: string, records: number, amount: string): KindTotal => ({
      kind: 'transactions',
      stage,
      records,
      money: { amount, net_amount: '0.00' },
    });
    expect(
      controlMismatches([
        total('shaped', 310, '37213.09'),
        total('valid', 310, '37213.09'),
        total('sent', 310, '37213.09'),
        total('accepted', 302, '37000.00'),
      ]),
    ).toEqual([
      'transactions: 310 sent, 302 accepted, amount 37213.09 -> 37000.00 (sent but not accepted by the service: ' +
        'refused, or its outcome not known yet)',
    ]);
    expect(controlMismatches([total('shaped', 3, '1.00'), total('valid', 3, '1.00')])).toEqual([]);
  });
});
