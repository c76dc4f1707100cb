import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';
import { NUMBER_MARK } from '../../src/sources/json-value.js';

// Every temporary directory of this file lives under one, removed at the end.
const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function dirs(): { cwd: string; exportDir: string } {
  const cwd = mkdtempSync(path.join(base, 'migrate-config-'));
  const exportDir = path.join(cwd, 'export');
  mkdirSync(exportDir);
  return { cwd, exportDir };
}

async function usageError(configText: string): Promise<string> {
  const { cwd } = dirs();
  writeFileSync(path.join(cwd, 'migrate.config.json'), configText);
  const error = await loadMigrateConfig({ cwd, env: {} }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

describe('loadMigrateConfig', () => {
  it('works without a mapping file: the default layout', async () => {
    const { cwd } = dirs();
    const config = await loadMigrateConfig({ cwd, env: {} });
    expect(config.configFile).toBeUndefined();
    expect(config.importSupplier).toBeUndefined();
    expect(config.mapping.accounts).toMatchObject({
      delimiter: ',',
      encoding: 'utf8',
      rename: {},
      ignore: [],
      dateFormats: [],
    });
  });

  it('takes the supplier from --supplier, else MIGRATE_SUPPLIER, else the file', async () => {
    const { cwd } = dirs();
    writeFileSync(path.join(cwd, 'migrate.config.json'), JSON.stringify({ import_supplier: 'FILE' }));
    expect((await loadMigrateConfig({ cwd, env: {} })).importSupplier).toBe('FILE');
    expect((await loadMigrateConfig({ cwd, env: { MIGRATE_SUPPLIER: 'ENV' } })).importSupplier).toBe('ENV');
    expect((await loadMigrateConfig({ cwd, env: { MIGRATE_SUPPLIER: 'ENV' }, supplier: 'FLAG' })).importSupplier).toBe(
      'FLAG',
    );
  });

  it("prefers the export directory's migrate.config.json over the working directory's; --config over both", async () => {
    const { cwd, exportDir } = dirs();
    writeFileSync(path.join(cwd, 'migrate.config.json'), JSON.stringify({ import_supplier: 'CWD' }));
    expect((await loadMigrateConfig({ cwd, exportDir, env: {} })).importSupplier).toBe('CWD');
    writeFileSync(path.join(exportDir, 'migrate.config.json'), JSON.stringify({ import_supplier: 'EXPORT' }));
    const fromExport = await loadMigrateConfig({ cwd, exportDir: 'export', env: {} });
    expect(fromExport.importSupplier).toBe('EXPORT');
    expect(fromExport.configFile).toBe(path.join(exportDir, 'migrate.config.json'));
    writeFileSync(path.join(cwd, 'other.json'), JSON.stringify({ import_supplier: 'FLAG' }));
    expect((await loadMigrateConfig({ cwd, exportDir, configPath: 'other.json', env: {} })).importSupplier).toBe(
      'FLAG',
    );
    await expect(loadMigrateConfig({ cwd, configPath: 'missing.json', env: {} })).rejects.toThrow(
      /--config missing\.json: no such file/,
    );
  });

  it('compiles the per-file rules with file-level delimiter and encoding defaults', async () => {
    const { cwd } = dirs();
    writeFileSync(
      path.join(cwd, 'migrate.config.json'),
      JSON.stringify({
        delimiter: ';',
        encoding: 'latin1',
        phone_default_country: 'GB',
        mapping: {
          customers: { delimiter: '\t', rename: { Surname: 'family_name' }, date_format: 'DD/MM/YYYY' },
          transactions: { scale: { amount: 0.01 } },
        },
      }),
    );
    const config = await loadMigrateConfig({ cwd, env: {} });
    expect(config.phoneDefaultCountry).toBe('GB');
    expect(config.mapping.accounts).toMatchObject({ delimiter: ';', encoding: 'latin1' });
    expect(config.mapping.customers).toMatchObject({
      delimiter: '\t',
      encoding: 'latin1',
      rename: { Surname: ['family_name'] },
    });
    expect(config.mapping.customers.dateFormats.map((format) => format.source)).toEqual(['DD/MM/YYYY']);
    expect(config.mapping.transactions.scale).toEqual({ amount: 0.01 });
  });

  it('names the key at fault for every kind of mistake', async () => {
    expect(await usageError('{"mapping": {"acounts": {}}}')).toMatch(/mapping\.acounts: unknown key/);
    expect(await usageError('{"mapping": {"accounts": {"renames": {}}}}')).toMatch(
      /mapping\.accounts\.renames: unknown key/,
    );
    expect(await usageError('{"mapping": {"accounts": {"rename": {"Ref": "account_ref"}}}}')).toMatch(
      /mapping\.accounts\.rename\.Ref: "account_ref" is not a documented field of accounts files/,
    );
    expect(await usageError('{"mapping": {"customers": {"scale": {"given_name": 100}}}}')).toMatch(
      /mapping\.customers\.scale\.given_name: "given_name" is not an amount field/,
    );
    expect(await usageError('{"mapping": {"accounts": {"date_format": "DD/MM/YY"}}}')).toMatch(
      /mapping\.accounts\.date_format\.0: "DD\/MM\/YY": two-digit years are ambiguous/,
    );
    expect(await usageError('{"mapping": {"notes": {"datetime_format": "DD/MM/YYYY HH:mm"}}}')).toMatch(
      /mapping\.notes\.utc_offset: or timezone is required with datetime_format/,
    );
    expect(await usageError('{"mapping": {"accounts": {"encoding": "ebcdic"}}}')).toMatch(
      /mapping\.accounts\.encoding:/,
    );
    expect(await usageError('{"phone_default_country": "XX"}')).toMatch(
      /phone_default_country: phone_default_country must be an ISO 3166-1 alpha-2 code/,
    );
    const ledgerInFile = await usageError('{"ledger": "postgresql://migrate:s3cret@db/acme"}');
    expect(ledgerInFile).toMatch(
      /ledger: the results ledger is not read from the mapping file .* --ledger or MIGRATE_LEDGER_URL/,
    );
    expect(ledgerInFile).not.toContain('s3cret');
    expect(
      await usageError('{"mapping": {"accounts": {"rename": {"A": "billing_name", "B": "billing_name"}}}}'),
    ).toMatch(/two columns are renamed to "billing_name"/);
    expect(await usageError('{"import_supplier": "ACME",}')).toMatch(/migrate\.config\.json: not valid JSON/);
  });
});

describe('the mapping file: scale', () => {
  it('takes a negative scale (a legacy sign convention) and says what scale accepts when refused', async () => {
    const { cwd } = dirs();
    writeFileSync(
      path.join(cwd, 'migrate.config.json'),
      '{"mapping": {"accounts": {"scale": {"transfer_balance": -0.01}}}}',
    );
    expect((await loadMigrateConfig({ cwd, env: {} })).mapping.accounts.scale).toEqual({ transfer_balance: -0.01 });
    for (const factor of ['0', '"0.01"', '1e999', 'null']) {
      expect(await usageError(`{"mapping": {"accounts": {"scale": {"transfer_balance": ${factor}}}}}`)).toMatch(
        /mapping\.accounts\.scale\.transfer_balance: scale takes a finite number other than 0, such as 0\.01/,
      );
    }
  });
});

describe('the mapping file: the per-kind options name the key at fault', () => {
  it.each([
    [
      '{"notes": {"file": "sub/THISTLE_*.csv"}}',
      /mapping\.notes\.file: file is a glob of names in the export directory/,
    ],
    ['{"notes": {"unmapped": "drop"}}', /mapping\.notes\.unmapped:/],
    [
      '{"notes": {"timezone": "Europe/London", "utc_offset": "Z"}}',
      /mapping\.notes\.timezone: and utc_offset both say/,
    ],
    ['{"notes": {"timezone": "Mars/Olympus"}}', /mapping\.notes\.timezone: timezone must be an IANA time zone/],
    ['{"notes": {"timezone": "Europe/London", "dst": "first"}}', /mapping\.notes\.dst:/],
    [
      '{"transactions": {"number_format": {"thousands": "."}}}',
      /mapping\.transactions\.number_format\.thousands: thousands takes/,
    ],
    ['{"transactions": {"number_format": {"negative": "after"}}}', /mapping\.transactions\.number_format\.negative:/],
    [
      '{"customers": {"on_invalid": {"landline": "drop"}}}',
      /mapping\.customers\.on_invalid\.landline: on_invalid takes "omit"/,
    ],
    [
      '{"customers": {"on_invalid": {"given_name": "omit"}, "rename": {"P": ["mobile", "fax"]}}}',
      /mapping\.customers\.rename\.P: "fax" is not a documented field/,
    ],
  ])('%s', async (mapping, message) => {
    expect(await usageError(`{"mapping": ${mapping}}`)).toMatch(message);
  });
});

describe('the mapping file: values exactly as written', () => {
  it('keeps the text of a number in constants, defaults and value maps; other numbers are numbers', async () => {
    const { cwd } = dirs();
    writeFileSync(
      path.join(cwd, 'migrate.config.json'),
      '{"mapping": {"accounts": {"constants": {"billing_customer_reference": 1.10}, "defaults": ' +
        '{"transfer_balance": 90000000000000000001}, "values": {"account_type": {"1": 2.50}}, ' +
        '"scale": {"transfer_balance": 0.01}}}, "task_params": {"n": 1.50}}',
    );
    const config = await loadMigrateConfig({ cwd, env: {} });
    const accounts = config.mapping.accounts;
    expect(accounts.constants).toEqual({ billing_customer_reference: `${NUMBER_MARK}1.10` });
    expect(accounts.defaults).toEqual({ transfer_balance: `${NUMBER_MARK}90000000000000000001` });
    expect(accounts.values['account_type']?.exact).toEqual(new Map([['1', `${NUMBER_MARK}2.50`]]));
    expect(accounts.scale).toEqual({ transfer_balance: 0.01 });
    expect(config.taskParams).toEqual({ n: 1.5 });
  });

  it('refuses a key given twice, naming it and its line', async () => {
    expect(await usageError('{"import_supplier": "ACME",\n "import_supplier": "OTHER"}')).toMatch(
      /migrate\.config\.json: not valid JSON \(the key "import_supplier" twice in one object, line 2\)\.$/,
    );
  });
});

describe('the mapping file: dialect, task_params, tenant fields and minor units', () => {
  it('reads them, complete with defaults', async () => {
    const { cwd } = dirs();
    writeFileSync(
      path.join(cwd, 'migrate.config.json'),
      JSON.stringify({
        dialect: 'kraken',
        task_params: { is_dry_run: true },
        tenant_fields: { supply_addresses: { meter_points: 'array' }, accounts: { portfolio_roles: 'array' } },
        mapping: { statements: { minor_units: ['gross_amount'] } },
      }),
    );
    const config = await loadMigrateConfig({ cwd, env: {} });
    expect(config).toMatchObject({
      dialect: 'kraken',
      taskParams: { is_dry_run: true },
      tenantFields: { supply_addresses: { meter_points: 'array' }, accounts: { portfolio_roles: 'array' } },
    });
    expect(config.mapping.statements.minorUnits).toEqual(['gross_amount']);
    expect((await loadMigrateConfig({ cwd: dirs().cwd, env: {} })).tenantFields).toEqual({});
  });

  it('names the key at fault', async () => {
    expect(await usageError('{"dialect": "octopus"}')).toMatch(/dialect: /);
    expect(await usageError('{"tenant_fields": {"supply_addresses": {"meter_points": "list"}}}')).toMatch(
      /tenant_fields\.supply_addresses\.meter_points/,
    );
    expect(await usageError('{"tenant_fields": {"supply_addresses": {"supply_postcode": "string"}}}')).toMatch(
      /tenant_fields\.supply_addresses\.supply_postcode: is a field of the spec, not a tenant field/,
    );
    expect(await usageError('{"tenant_fields": {"meters": {}}}')).toMatch(/tenant_fields\.meters: unknown key/);
    expect(await usageError('{"mapping": {"transactions": {"minor_units": ["amount"]}}}')).toMatch(
      /mapping\.transactions\.minor_units: "amount" is not an amount sent in minor units/,
    );
  });
});
