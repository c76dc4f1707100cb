import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A small export (default layout, docs/export-format.md) with planted data errors at
// known files and lines, and ERR- accounts the sandbox ends ERRORED: what an operator's
// `status` and `report` must account for, row by row.

export interface PlantedError {
  account: string;
  file: string;
  line: number;
  /** The source column, where the problem is in one cell. */
  column?: string;
  /** Found by the service (after the push), not by local validation. */
  byService?: boolean;
}

export interface OpsExport {
  dir: string;
  /** Accounts that end done. */
  done: string[];
  /** Accounts held back by local validation. */
  invalid: string[];
  /** Accounts the platform ERRORED. */
  errored: string[];
  planted: PlantedError[];
  /** Personal data written into the export: none may appear in a log line. */
  personal: string[];
}

const SUPPLIER = 'ACME';

export function writeOpsExport(root: string): OpsExport {
  const dir = join(root, 'export');
  mkdirSync(dir, { recursive: true });
  const month = new Date().toISOString().slice(0, 7);
  const day = new Date().toISOString().slice(8, 10) === '01' ? '01' : '02';
  const accounts = [
    'external_account_number,import_supplier,account_type,billing_name,billing_email,date_of_sale,communication_preference',
  ];
  const customers = ['external_account_number,given_name,family_name,email,mobile'];
  const supply = ['external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date'];
  const notes = ['external_account_number,body,created_at'];
  const transactions = ['external_account_number,transaction_id,transaction_date,amount,type,reason'];
  const instructions = ['external_account_number,import_supplier,vendor,reference,type'];
  const result: OpsExport = { dir, done: [], invalid: [], errored: [], planted: [], personal: [] };
  const numbers = [
    'OPS-0001',
    'OPS-0002',
    'OPS-0003',
    'OPS-0004',
    'OPS-0005',
    'OPS-0006',
    'OPS-0007',
    'OPS-0008',
    'ERR-0001',
    'ERR-0002',
  ];
  for (const [index, number] of numbers.entries()) {
    const name = `Person${index} Surname${index}`;
    const email = number === 'OPS-0007' ? 'not-an-e-mail' : `person${index}.private@example.org`;
    const date = number === 'OPS-0008' ? '2024-13-45' : '2024-02-02';
    accounts.push(`${number},${SUPPLIER},DOMESTIC,${name},${email},${date},ONLINE`);
    const mobile = number === 'OPS-0003' ? '12345' : `+4479111230${String(index).padStart(2, '0')}`;
    customers.push(`${number},Person${index},Surname${index},${email},${mobile}`);
    result.personal.push(name, `Surname${index}`, `person${index}.private@example.org`, mobile);
    supply.push(`${number},${index + 1} Private Road,LS1 1AA,2024-02-02`);
    result.personal.push(`${index + 1} Private Road`);
    const body = `Private note about ${name} (call after 5pm)`;
    notes.push(`${number},${body},${month}-${day}T09:00:00Z`);
    result.personal.push(body);
    const txDate = number === 'OPS-0004' ? '2024-02-30' : `${month}-${day}`;
    transactions.push(`${number},${number}-T1,${txDate},12.50,CHARGE,IMPORTED_CHARGE`);
    instructions.push(`${number},${SUPPLIER},STRIPE,${number === 'OPS-0005' ? 'FAIL-0005' : `pm_${number}`},CARD`);
  }
  result.planted.push(
    { account: 'OPS-0003', file: 'customers.csv', line: 4, column: 'mobile' },
    { account: 'OPS-0004', file: 'transactions.csv', line: 5, column: 'transaction_date' },
    { account: 'OPS-0005', file: 'payment_instructions.csv', line: 6, byService: true },
    { account: 'OPS-0007', file: 'accounts.csv', line: 8, column: 'billing_email' },
    // The same bad address is the customer's e-mail too.
    { account: 'OPS-0007', file: 'customers.csv', line: 8, column: 'email' },
    { account: 'OPS-0008', file: 'accounts.csv', line: 9, column: 'date_of_sale' },
    { account: 'ERR-0001', file: 'accounts.csv', line: 10, byService: true },
    { account: 'ERR-0002', file: 'accounts.csv', line: 11, byService: true },
  );
  result.invalid.push('OPS-0003', 'OPS-0004', 'OPS-0007', 'OPS-0008');
  result.errored.push('ERR-0001', 'ERR-0002');
  result.done.push('OPS-0001', 'OPS-0002', 'OPS-0006');
  const write = (file: string, lines: string[]): void => writeFileSync(join(dir, file), `${lines.join('\n')}\n`);
  write('accounts.csv', accounts);
  write('customers.csv', customers);
  write('supply_addresses.csv', supply);
  write('notes.csv', notes);
  write('transactions.csv', transactions);
  write('payment_instructions.csv', instructions);
  return result;
}
