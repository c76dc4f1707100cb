import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ValidateFlags } from '../../../src/commands/validate/flags.js';
import { mappingFlagsOf, resolveValidateConfig, type ValidateConfig } from '../../../src/commands/validate/resolve.js';
import { loadMigrateConfig, type MigrateConfig } from '../../../src/config/index.js';
import { refusalCode } from '../refusal-code.js';

// `migrate validate`'s configuration as a table: flags (as commander parses them), environment and the mapping file
// in; the one configuration, or the refusal's code, out.

let dir: string;
let file: MigrateConfig;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'validate-resolve-'));
  // The default layout: no mapping file in the export directory or the working directory.
  file = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: {} });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FLAGS: ValidateFlags = { concurrency: 8 };

interface Case {
  name: string;
  flags?: Partial<ValidateFlags>;
  env?: NodeJS.ProcessEnv;
  mapping?: Partial<MigrateConfig>;
  expected: Partial<ValidateConfig> | { refused: string };
}

const CASES: Case[] = [
  {
    name: 'no flags: the readable report in the spec dialect, nothing sent',
    expected: {
      json: false,
      errorsCsv: undefined,
      allowNoAccounts: false,
      show: undefined,
      dialect: 'spec',
      remote: undefined,
    },
  },
  { name: "the mapping file's dialect", mapping: { dialect: 'kraken' }, expected: { dialect: 'kraken' } },
  {
    name: '--dialect wins over the mapping file',
    flags: { dialect: 'spec' },
    mapping: { dialect: 'kraken' },
    expected: { dialect: 'spec' },
  },
  { name: 'MIGRATE_DIALECT', env: { MIGRATE_DIALECT: 'kraken' }, expected: { dialect: 'kraken' } },
  {
    name: '--remote: the service at the default concurrency, with the service flags',
    flags: { remote: true, baseUrl: 'https://api.example.org', supplier: 'ACME' },
    expected: { remote: { sandbox: false, concurrency: 8, flags: { baseUrl: 'https://api.example.org' } } },
  },
  {
    name: '--remote --sandbox --concurrency 4',
    flags: { remote: true, sandbox: true, concurrency: 4 },
    expected: { remote: { sandbox: true, concurrency: 4, flags: {} } },
  },
  { name: '--sandbox without --remote', flags: { sandbox: true }, expected: { refused: 'sandbox_without_remote' } },
  { name: '--show with --json', flags: { show: 'A-1', json: true }, expected: { refused: 'show_with_json' } },
  { name: '--show without a number', flags: { show: ' , ' }, expected: { refused: 'show_empty' } },
  { name: '--show: each number once', flags: { show: 'A-1, B-2,A-1' }, expected: { show: ['A-1', 'B-2'] } },
  {
    name: "a tenant's contract needs the kraken dialect",
    mapping: { contract: { title: 'Tenant' } as MigrateConfig['contract'] },
    expected: { refused: 'contract_needs_kraken_dialect' },
  },
  {
    name: '--json, --errors-csv, --allow-no-accounts',
    flags: { json: true, errorsCsv: 'errors.csv', allowNoAccounts: true },
    expected: { json: true, errorsCsv: 'errors.csv', allowNoAccounts: true },
  },
];

describe('resolveValidateConfig', () => {
  it.each(CASES)('$name', ({ flags, env, mapping, expected }) => {
    const input = { dir, flags: { ...FLAGS, ...flags }, env: env ?? {}, file: { ...file, ...mapping } };
    if ('refused' in expected) {
      expect(refusalCode(() => resolveValidateConfig(input))).toBe(expected.refused);
      return;
    }
    const config = resolveValidateConfig(input);
    expect(config).toMatchObject(expected);
    // The mapping is read in the dialect chosen: payloads are checked as push would send them.
    expect(config.mapping.dialect).toBe(config.dialect);
  });

  it('is complete and immutable', () => {
    const config = resolveValidateConfig({ dir, flags: FLAGS, env: {}, file });
    expect(Object.keys(config).sort()).toEqual(
      ['allowNoAccounts', 'dialect', 'dir', 'errorsCsv', 'json', 'mapping', 'remote', 'show'].sort(),
    );
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('the mapping file is read with the export directory, --supplier, --config and --contract alone', () => {
    const flags = { ...FLAGS, supplier: 'ACME', config: 'm.json', contract: 't.yaml', json: true, remote: true };
    expect(mappingFlagsOf('exports/', flags)).toEqual({
      dir: 'exports/',
      supplier: 'ACME',
      config: 'm.json',
      contract: 't.yaml',
    });
  });
});
