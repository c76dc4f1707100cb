import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { load as parse } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { compileContract, TENANT_SCOPES, type Contract, type TenantScope } from '../../src/schema/index.js';

// The tenant-field examples of docs/real-platform.md, read from the page itself, hold for the fixture contracts:
// the mapping file's declared fields are fields of the flat-address family at their levels, and the supply addresses
// shown (a CSV row, a JSON record) pass the family they are shaped like.

const ROOT = path.join(import.meta.dirname, '..', '..');
const page = readFileSync(path.join(ROOT, 'docs', 'real-platform.md'), 'utf8');

function fixture(name: string): Contract {
  const file = path.join(ROOT, 'fixtures', 'contracts', name, 'openapi.yaml');
  return compileContract(parse(readFileSync(file, 'utf8')), file);
}

function blocks(language: string): string[] {
  return [...page.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1] ?? '');
}

const flat = fixture('flat-address');
const structured = fixture('structured-address');

describe('the tenant-field examples of docs/real-platform.md', () => {
  const json = blocks('json').map((text) => JSON.parse(text) as Record<string, unknown>);

  it('declare fields the flat-address fixture defines at their levels', () => {
    const declared = json.flatMap((block) =>
      Object.entries((block['tenant_fields'] ?? {}) as Record<string, Record<string, string>>).flatMap(
        ([scope, fields]) => Object.keys(fields).map((name) => [scope as TenantScope, name] as const),
      ),
    );
    expect(declared.length).toBeGreaterThan(2);
    for (const [scope, name] of declared) {
      expect(TENANT_SCOPES).toContain(scope);
      expect(flat.fieldsOf(scope).has(name), `${scope}.${name}`).toBe(true);
    }
  });

  it('show a CSV supply address that passes the flat-address fixture', () => {
    const rows = blocks('csv')
      .filter((text) => text.split('\n')[0]?.includes('meter_points'))
      .flatMap((text) => parseCsv(text, { columns: true }) as Array<Record<string, string>>);
    expect(rows.length).toBeGreaterThan(0);
    for (const { external_account_number: number = '', meter_points: points = '[]', ...address } of rows) {
      const payload = {
        import_supplier: 'FERNLEIGH',
        external_account_number: number,
        supply_addresses: [{ ...address, meter_points: JSON.parse(points) as unknown }],
      };
      expect(flat.check('accountPayload', payload)).toEqual([]);
    }
  });

  it('show a JSON supply address that passes the structured-address fixture', () => {
    const addresses = json.filter((block) => 'meter_points' in block);
    expect(addresses.length).toBeGreaterThan(0);
    for (const address of addresses)
      expect(structured.check('accountPayload', { import_supplier: 'WATTLE', supply_addresses: [address] })).toEqual(
        [],
      );
  });
});
