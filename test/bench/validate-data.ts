import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';

// A synthetic export for the validate benchmark: N accounts (20 columns), 2 customers, 1 supply address, 1 note
// and 2 transactions each; all valid, so every row goes the whole way through mapping and schemas.
// Sorted by external account number (streaming join), or with the customers, notes and
// transactions files in a scattered account order (scratch join).

async function writeLines(
  file: string,
  header: string,
  count: number,
  rows: (index: number) => string[],
): Promise<number> {
  const stream = createWriteStream(file);
  stream.write(`${header}\n`);
  let written = 0;
  let buffer = '';
  for (let index = 0; index < count; index += 1) {
    for (const row of rows(index)) {
      buffer += `${row}\n`;
      written += 1;
    }
    if (buffer.length > 1 << 16) {
      if (!stream.write(buffer)) await once(stream, 'drain');
      buffer = '';
    }
  }
  stream.end(buffer);
  await once(stream, 'finish');
  return written;
}

const day = (index: number): string => `2026-11-${String(1 + (index % 20)).padStart(2, '0')}`;

/** A permutation of 0..count-1 that scatters neighbours (multiplication by a prime that does not divide count). */
function scatter(count: number): (index: number) => number {
  const step = [7919, 104729, 1299709].find((prime) => count % prime !== 0) ?? 1;
  return (index) => (index * step) % count;
}

/** Writes the export into `dir`; resolves with the number of data rows per file. */
export async function generateExport(
  dir: string,
  accounts: number,
  order: 'sorted' | 'scattered' = 'sorted',
): Promise<Record<string, number>> {
  const account = order === 'sorted' ? (index: number): number => index : scatter(accounts);
  const id = (index: number): string => `BENCH-${String(index).padStart(8, '0')}`;
  const counts: Record<string, number> = {};
  counts['accounts.csv'] = await writeLines(
    path.join(dir, 'accounts.csv'),
    'external_account_number,import_supplier,account_type,billing_name,billing_email,billing_customer_reference,billing_address.name,billing_address.street_address,billing_address.locality,billing_address.postal_code,billing_address.country,account_billing_options.period_length,account_billing_options.period_start_day,account_billing_options.use_industry_billing,date_of_sale,sales_channel,communication_preference,transfer_balance,operations_team_name,sales_subchannel',
    accounts,
    (i) => [
      `${id(i)},BENCH,DOMESTIC,Customer ${i},customer${i}@example.org,REF${i},Customer ${i},"${i} High Street, Flat ${i % 9}",Leeds,LS1 ${1 + (i % 9)}AB,GB,MONTHLY,${1 + (i % 28)},false,2024-03-0${1 + (i % 9)},DIRECT,ONLINE,0,Team ${i % 5},web`,
    ],
  );
  counts['customers.csv'] = await writeLines(
    path.join(dir, 'customers.csv'),
    'external_account_number,given_name,family_name,email,mobile,date_of_birth,title,customer_preferences.opted_into_sms,customer_preferences.opted_into_updates',
    accounts,
    (row) =>
      [account(row)].flatMap((i) => [
        `${id(i)},Ada,Lovelace${i},ada${i}@example.org,+4479111${String(i % 100000).padStart(5, '0')},1980-01-0${1 + (i % 9)},Ms,true,no`,
        `${id(i)},Bob,Lovelace${i},bob${i}@example.org,,1979-05-1${i % 10},Mr,false,yes`,
      ]),
  );
  counts['supply_addresses.csv'] = await writeLines(
    path.join(dir, 'supply_addresses.csv'),
    'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date',
    accounts,
    (row) => [account(row)].map((i) => `${id(i)},${i} High Street,LS1 ${1 + (i % 9)}AB,2024-03-0${1 + (i % 9)}`),
  );
  counts['notes.csv'] = await writeLines(
    path.join(dir, 'notes.csv'),
    'external_account_number,body,created_at,is_pinned',
    accounts,
    (row) => [account(row)].map((i) => `${id(i)},"Migrated from legacy, note ${i}",2026-11-01T09:00:00Z,false`),
  );
  counts['transactions.csv'] = await writeLines(
    path.join(dir, 'transactions.csv'),
    'external_account_number,transaction_id,transaction_date,amount,type,reason,display_note',
    accounts,
    (row) =>
      [account(row)].flatMap((i) => [
        `${id(i)},T${i}-1,${day(i)},42.10,CHARGE,IMPORTED_CHARGE,Opening charge`,
        `${id(i)},T${i}-2,${day(i + 1)},42.10,PAYMENT,ACCOUNT_CHARGE_PAYMENT,`,
      ]),
  );
  return counts;
}
