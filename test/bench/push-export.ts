import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

// A synthetic export for the push benchmark, sorted by account (the streaming join), with every
// record kind: per account one accounts row, one or two customers, one supply address; three
// notes on two accounts in three, two transactions on every second account, two historical
// statements on every fourth, one payment instruction on four accounts in five (`full`), or one
// note per account (`lean`, for the 1,000,000-account run whose service answers at once).
// It returns the fewest requests the spec allows for it: per account create, one status check,
// one request per post-import kind present, one per payment instruction.

export type ExportShape = 'full' | 'lean';

export interface GeneratedExport {
  accounts: number;
  minimumRequests: number;
}

class Lines {
  readonly #stream: WriteStream;
  #buffer = '';

  constructor(file: string, header: string) {
    this.#stream = createWriteStream(file);
    this.#buffer = `${header}\n`;
  }

  async add(line: string): Promise<void> {
    this.#buffer += `${line}\n`;
    if (this.#buffer.length < 1 << 16) return;
    const ok = this.#stream.write(this.#buffer);
    this.#buffer = '';
    if (!ok) await once(this.#stream, 'drain');
  }

  async end(): Promise<void> {
    this.#stream.end(this.#buffer);
    await once(this.#stream, 'finish');
  }
}

const day = (index: number): string => `2026-11-${String(1 + (index % 15)).padStart(2, '0')}`;

export async function writePushExport(dir: string, count: number, shape: ExportShape): Promise<GeneratedExport> {
  const file = (name: string, header: string): Lines => new Lines(path.join(dir, name), header);
  const accounts = file(
    'accounts.csv',
    'external_account_number,import_supplier,account_type,billing_name,billing_email,billing_customer_reference,billing_address.name,billing_address.street_address,billing_address.locality,billing_address.postal_code,billing_address.country,account_billing_options.period_length,account_billing_options.period_start_day,account_billing_options.use_industry_billing,date_of_sale,sales_channel,communication_preference,transfer_balance,operations_team_name',
  );
  const customers = file(
    'customers.csv',
    'external_account_number,title,given_name,family_name,email,mobile,date_of_birth,customer_preferences.opted_into_sms',
  );
  const addresses = file(
    'supply_addresses.csv',
    'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date',
  );
  const notes = file('notes.csv', 'external_account_number,body,created_at');
  const transactions = file(
    'transactions.csv',
    'external_account_number,transaction_id,transaction_date,amount,type,reason,display_note',
  );
  const statements = file(
    'statements.csv',
    'external_account_number,statement_id,bill_period_from_date,bill_period_to_date,issued_date,number,gross_amount',
  );
  const instructions = file(
    'payment_instructions.csv',
    'external_account_number,import_supplier,vendor,reference,type',
  );
  let minimumRequests = 0;
  for (let i = 0; i < count; i += 1) {
    const id = `PB-${String(i).padStart(8, '0')}`;
    minimumRequests += 2;
    await accounts.add(
      `${id},ACME,DOMESTIC,Customer ${i},customer${i}@example.org,REF${i},Customer ${i},${i} High Street,Leeds,LS1 ${1 + (i % 9)}AB,GB,MONTHLY,${1 + (i % 28)},false,2024-03-0${1 + (i % 9)},DIRECT,ONLINE,0,Team ${i % 5}`,
    );
    await customers.add(
      `${id},Ms,Ada,Lovelace${i},ada${i}@example.org,+4479111${String(i % 100000).padStart(5, '0')},1980-01-0${1 + (i % 9)},true`,
    );
    if (shape === 'full' && i % 2 === 1)
      await customers.add(`${id},Mr,Bob,Lovelace${i},bob${i}@example.org,,1979-05-1${i % 10},false`);
    await addresses.add(`${id},${i} High Street,LS1 ${1 + (i % 9)}AB,2024-03-0${1 + (i % 9)}`);
    const noteCount = shape === 'lean' ? 1 : i % 3 === 0 ? 0 : 3;
    for (let n = 0; n < noteCount; n += 1)
      await notes.add(`${id},"Migrated from legacy, note ${n} of ${i}",2026-11-0${1 + n}T09:00:00Z`);
    if (noteCount > 0) minimumRequests += 1;
    if (shape === 'lean') continue;
    if (i % 2 === 0) {
      await transactions.add(`${id},T${i}-1,${day(i)},42.10,CHARGE,IMPORTED_CHARGE,Opening charge`);
      await transactions.add(`${id},T${i}-2,${day(i + 1)},42.10,PAYMENT,ACCOUNT_CHARGE_PAYMENT,`);
      minimumRequests += 1;
    }
    if (i % 4 === 0) {
      await statements.add(`${id},S${i}-09,2026-09-01,2026-09-30,2026-10-03,INV-${i}-09,40.50`);
      await statements.add(`${id},S${i}-10,2026-10-01,2026-10-31,2026-11-03,INV-${i}-10,41.25`);
      minimumRequests += 1;
    }
    if (i % 5 !== 0) {
      await instructions.add(`${id},ACME,STRIPE,pm_${i},CARD`);
      minimumRequests += 1;
    }
  }
  await Promise.all(
    [accounts, customers, addresses, notes, transactions, statements, instructions].map((lines) => lines.end()),
  );
  return { accounts: count, minimumRequests };
}
