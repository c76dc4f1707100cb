import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate, root } from './validate-helpers.js';

// `migrate validate --contract` through the real binary, without any service: every request body the export would
// send is judged by the tenant's document, and each violation is reported at its file, line and column with the
// document's own words (docs/real-platform.md "The tenant's contract").

const CONTRACTS = path.join(root, 'fixtures', 'contracts');

beforeAll(build);
afterAll(cleanup);

interface Row {
  file: string;
  line: number;
  column?: string;
  attr?: string;
  external_account_number: string;
  code: string;
  message: string;
}

/** A copy of a fixture's export beside its document, with `edits` (file -> [from, to]) applied. */
function fixtureCopy(family: string, edits: Record<string, Array<[string, string]>> = {}): string {
  const dir = exportDir({});
  cpSync(path.join(CONTRACTS, family), dir, { recursive: true });
  for (const [file, changes] of Object.entries(edits)) {
    const target = path.join(dir, 'export', file);
    let text = readFileSync(target, 'utf8');
    for (const [from, to] of changes) {
      expect(text).toContain(from);
      text = text.replace(from, to);
    }
    writeFileSync(target, text);
  }
  return path.join(dir, 'export');
}

function validateJson(dir: string, extra: string[] = []): { code: number | null; rows: Row[] } {
  const result = migrate(['validate', dir, '--json', ...extra], { env: { MIGRATE_BASE_URL: '', MIGRATE_API_KEY: '' } });
  const report = JSON.parse(result.stdout) as { errors: Row[] };
  return { code: result.code, rows: report.errors };
}

describe('validate --contract', () => {
  it('reports a CHARGE without a reason, a wrong vendor and a meter point without identifier at their lines', () => {
    const dir = fixtureCopy('flat-address', {
      'transactions.csv': [['15.00,CHARGE,METER_EXCHANGE_FEE,', '15.00,CHARGE,,']],
      'payment_instructions.csv': [['FERN-0002,BACSWAY,', 'FERN-0002,STRIPE,']],
      'supply_addresses.csv': [['""identifier"": ""1012345678906"", ', '']],
    });
    const { code, rows } = validateJson(dir);
    expect(code).toBe(5);
    const found = rows.map(({ message: _message, ...row }) => row);
    expect(found).toEqual([
      {
        file: 'transactions.csv',
        line: 4,
        column: 'reason',
        attr: 'reason',
        external_account_number: 'FERN-0002',
        code: 'contract_required',
      },
      {
        file: 'payment_instructions.csv',
        line: 3,
        column: 'vendor',
        attr: 'vendor',
        external_account_number: 'FERN-0002',
        code: 'contract_choice',
      },
      {
        file: 'supply_addresses.csv',
        line: 4,
        column: 'meter_points',
        attr: 'supply_addresses.0.meter_points.0.identifier',
        external_account_number: 'FERN-0003',
        code: 'contract_required',
      },
    ]);
    expect(rows[0]?.message).toBe(
      "reason is required by the tenant's document (Charge); allowed values: IMPORTED_CHARGE, METER_EXCHANGE_FEE, " +
        'MISSED_APPOINTMENT, RETURNED_PAYMENT_FEE, WARRANT_COSTS.',
    );
    expect(rows[1]?.message).toBe(
      'vendor: "STRIPE" is not a value the tenant\'s document (LegacyPaymentInstruction.vendor) allows; allowed ' +
        'values: PAYGATE, BACSWAY, BACSWAY_BATCHED, DIRECTLINK.',
    );
    expect(rows[2]?.message).toBe("identifier is required by the tenant's document (ElectricityMeterPoint).");
  });

  it('passes both fixture exports as they are, without any service configured', () => {
    for (const family of ['flat-address', 'structured-address']) {
      const { code, rows } = validateJson(path.join(CONTRACTS, family, 'export'));
      expect(rows, family).toEqual([]);
      expect(code, family).toBe(0);
    }
  });

  it('takes --contract over the mapping file, and refuses a contract with the spec dialect (exit 2)', () => {
    const dir = fixtureCopy('flat-address');
    const spec = migrate(['validate', dir, '--dialect', 'spec']);
    expect(spec.code).toBe(2);
    expect(spec.stderr).toMatch(/describes the platform's own request forms.*run with --dialect kraken/s);
    const other = migrate(['validate', dir, '--contract', path.join(CONTRACTS, 'structured-address', 'openapi.yaml')]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/tenant_fields\.customers\.psr: the contract \(Wattle Power data import 2\.1\)/);
  });
});
