import { describe, expect, it } from 'vitest';
import { joinAccount } from '../../src/mapping/join.js';
import { exportMappingOf } from '../../src/mapping/mapping-rules.js';
import { mapJsonRecord, planFile } from '../../src/mapping/record.js';
import { parseJson } from '../../src/sources/json-value.js';

// An account's posting history in its payload's ledgers, each posting naming its legacy row (`_file`, `_line`): the
// keys are not sent, and a problem of a posting is named at its own row, not at the account's.

const config = exportMappingOf({}, 'ACME', undefined);
const plan = planFile('accounts', 'accounts.json', [], config);
const context = { today: '2026-11-27', columnOf: {}, importSupplier: 'ACME', tenantFields: {} };

function account(ledgers: unknown[]) {
  const text = JSON.stringify({ external_account_number: 'A-1', transfer_balance: -10, ledgers });
  const record = mapJsonRecord(plan, 7, parseJson(text) as Record<string, unknown>);
  return joinAccount('A-1', [{ file: 'CIS_ACCOUNTS.csv', record }], context);
}

const posting = (id: string, date: string, line: number) => ({
  transaction_id: id,
  transaction_date: date,
  amount: 10,
  type: 'CHARGE',
  reason: 'IMPORTED_CHARGE',
  _file: 'FIN_TXN.txt',
  _line: line,
});

describe("a ledger's postings named at their legacy rows", () => {
  it('takes the provenance keys out of the payload', () => {
    const joined = account([
      {
        ledger_code: 'MAIN',
        last_statement_balance: 0,
        last_statement_closing_date: '2026-10-31',
        ledger_balance: -10,
        current_statement_transactions: [posting('T1', '2026-11-02', 12)],
      },
    ]);
    expect(joined.issues.filter((issue) => issue.attr?.startsWith('ledgers'))).toEqual([]);
    expect(JSON.stringify(joined.payload)).not.toMatch(/_file|_line/);
    expect(joined.origins['ledgers.0.current_statement_transactions.0']).toEqual({ file: 'FIN_TXN.txt', line: 12 });
  });

  it("names a posting's problem at the posting's row; a ledger's at the account's", () => {
    const joined = account([
      {
        ledger_code: 'MAIN',
        last_statement_balance: 0,
        last_statement_closing_date: '2026-10-31',
        ledger_balance: -20,
        historical_statement_transactions: [posting('T1', '2026-10-02', 3), posting('T2', '2026-11-02', 9)],
        current_statement_transactions: [{ ...posting('T3', '2026-11-03', 14), type: 'GIFT' }],
      },
    ]);
    const where = joined.issues.map((issue) => [issue.attr, issue.code, `${issue.file}:${issue.line}`]);
    expect(where).toEqual(
      expect.arrayContaining([
        [
          'ledgers.0.historical_statement_transactions.1.transaction_date',
          'historical_statement_transaction_after_last_statement_closing_date',
          'FIN_TXN.txt:9',
        ],
        ['ledgers.0.current_statement_transactions.0.type', 'invalid_choice', 'FIN_TXN.txt:14'],
        ['transfer_balance', 'ledger_balances_not_equal_to_transfer_balance', 'CIS_ACCOUNTS.csv:7'],
      ]),
    );
  });
});
