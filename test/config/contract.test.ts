import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkContractDialect, loadMigrateConfig } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';

// The tenant's contract as a command reads it: --contract or the mapping file's "contract" (relative to that file),
// read once, and the mapping file's tenant parts checked against it before any record is read.

const FLAT = path.join(import.meta.dirname, '..', '..', 'fixtures', 'contracts', 'flat-address', 'openapi.yaml');
const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-contract-config-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(base, 'cwd-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

async function failure(load: Promise<unknown>): Promise<string> {
  const error = await load.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

describe('loading the contract', () => {
  it('reads "contract" relative to the mapping file, and --contract relative to the working directory', async () => {
    const cwd = dirWith({ 'migrate.config.json': JSON.stringify({ contract: 'tenant/openapi.yaml' }) });
    const tenant = path.join(cwd, 'tenant');
    mkdirSync(tenant);
    copyFileSync(FLAT, path.join(tenant, 'openapi.yaml'));
    expect((await loadMigrateConfig({ cwd, env: {} })).contract?.title).toBe('Fernleigh Energy data import v1');
    const elsewhere = dirWith({});
    const byFlag = await loadMigrateConfig({ cwd: elsewhere, env: {}, contractPath: path.relative(elsewhere, FLAT) });
    expect(byFlag.contract?.title).toBe('Fernleigh Energy data import v1');
    expect((await loadMigrateConfig({ cwd: elsewhere, env: {} })).contract).toBeUndefined();
  });

  it('names the file that cannot be read or parsed, and a document that is no data-import contract', async () => {
    const cwd = dirWith({ 'broken.yaml': 'openapi: 3.0.3\npaths: [\n', 'graphql.json': '{"openapi": "3.0.3"}' });
    expect(await failure(loadMigrateConfig({ cwd, env: {}, contractPath: 'missing.yaml' }))).toMatch(
      /^--contract missing\.yaml: cannot be read \(no such file: .*missing\.yaml\)\.$/,
    );
    expect(await failure(loadMigrateConfig({ cwd, env: {}, contractPath: 'broken.yaml' }))).toMatch(
      /broken\.yaml: not a YAML or JSON document \(.*line \d+\)\.$/,
    );
    expect(await failure(loadMigrateConfig({ cwd, env: {}, contractPath: 'graphql.json' }))).toMatch(
      /graphql\.json: the document defines no JSON request body .* for POST \/v2\/data-import\/accounts\//,
    );
  });

  it('refuses a document whose YAML aliases stand for billions of values, before reading it as a contract', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level <= 8; level += 1) {
      const previous = String.fromCharCode(96 + level);
      levels.push(
        `${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10).fill(`*${previous}`).join(', ')}]`,
      );
    }
    const cwd = dirWith({ 'laughs.yaml': `${levels.join('\n')}\n` });
    expect(await failure(loadMigrateConfig({ cwd, env: {}, contractPath: 'laughs.yaml' }))).toMatch(
      /laughs\.yaml: the document holds more than 5,000,000 values \(YAML aliases repeating a part\?\)/,
    );
  });

  it('refuses a declared tenant field the document does not define at its level, and task_params it refuses', async () => {
    const config = (extra: Record<string, unknown>) =>
      dirWith({ 'migrate.config.json': JSON.stringify({ contract: FLAT, ...extra }) });
    const typo = config({ tenant_fields: { customers: { psrr: 'array' } } });
    expect(await failure(loadMigrateConfig({ cwd: typo, env: {} }))).toMatch(
      /tenant_fields\.customers\.psrr: the contract \(Fernleigh Energy data import v1\) defines no field psrr on customers \(it defines .*psr/,
    );
    const wrongLevel = config({ tenant_fields: { accounts: { psr: 'array' } } });
    expect(await failure(loadMigrateConfig({ cwd: wrongLevel, env: {} }))).toMatch(/tenant_fields\.accounts\.psr: /);
    const params = config({ task_params: { is_dry_run: 'yes' } });
    expect(await failure(loadMigrateConfig({ cwd: params, env: {} }))).toMatch(
      /task_params\.is_dry_run: is_dry_run: "yes" must be of type boolean/,
    );
    const fine = config({
      tenant_fields: { customers: { psr: 'array' }, line_items: { external_rate_identifier: 'string' } },
    });
    expect((await loadMigrateConfig({ cwd: fine, env: {} })).tenantFields).toEqual({
      customers: { psr: 'array' },
      line_items: { external_rate_identifier: 'string' },
    });
  });

  it("checks the configured import supplier once against the tenant's supplier codes", async () => {
    const cwd = dirWith({ 'migrate.config.json': JSON.stringify({ contract: FLAT, import_supplier: 'ACME' }) });
    expect(await failure(loadMigrateConfig({ cwd, env: {} }))).toMatch(
      /import supplier .* does not fit the tenant's contract .*"ACME" is not a value .* allowed values: FERNLEIGH, FERNLEIGH_SME, FERNLEIGH PAYG, BRACKEN\./,
    );
    expect((await loadMigrateConfig({ cwd, env: {}, supplier: 'FERNLEIGH PAYG' })).importSupplier).toBe(
      'FERNLEIGH PAYG',
    );
  });

  it("wants the kraken dialect with a contract: its forms are the platform's", async () => {
    const config = await loadMigrateConfig({ cwd: dirWith({}), env: {}, contractPath: FLAT });
    expect(() => checkContractDialect(config, 'spec')).toThrow(/run with --dialect kraken/);
    expect(() => checkContractDialect(config, 'kraken')).not.toThrow();
    expect(() => checkContractDialect({ contract: undefined }, 'spec')).not.toThrow();
  });
});
