import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushFlags } from '../../../src/commands/push/flags.js';
import { resolvePushConfig, type PushConfig, type PushInputs } from '../../../src/commands/push/resolve.js';
import { loadMigrateConfig, type MigrateConfig } from '../../../src/config/index.js';
import { keptDialect } from '../../../src/config/service.js';
import { RUN_DEFAULTS } from '../../../src/defaults.js';
import { MigrateError } from '../../../src/errors.js';

// resolvePushConfig as a table, like the state machines: flags, environment and what was read (the mapping file, the
// state directory's recorded dialect, the --accounts file) -> the run's configuration, or the UsageError that refuses
// it. Pure: nothing here touches a file but the mapping files loaded once below.

const CONTRACT = path.join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'fixtures',
  'contracts',
  'flat-address',
  'openapi.yaml',
);

let dir: string;
let plain: MigrateConfig;
let withContract: MigrateConfig;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'push-resolve-'));
  plain = await loadMigrateConfig({ cwd: dir, env: {} });
  withContract = await loadMigrateConfig({ cwd: dir, env: {}, contractPath: CONTRACT });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The flags commander gives for `migrate push exports/` with nothing else. */
const DEFAULT_FLAGS: PushFlags = {
  dir: 'exports',
  state: RUN_DEFAULTS.stateDir,
  concurrency: RUN_DEFAULTS.concurrency,
  wait: true,
  waitTimeout: RUN_DEFAULTS.waitTimeoutSeconds,
  lostCreateChecks: RUN_DEFAULTS.lostCreateChecks,
  batchBytes: RUN_DEFAULTS.batchBytes,
  firstAnswerTimeout: RUN_DEFAULTS.firstAnswerSeconds,
  checkPreviouslyAdded: true,
  forceAddToCurrentStatement: true,
  metricsInterval: RUN_DEFAULTS.metricsIntervalSeconds,
};

interface Row {
  name: string;
  flags?: Partial<PushFlags>;
  env?: NodeJS.ProcessEnv;
  mapping?: 'plain' | 'contract' | Partial<MigrateConfig>;
  recorded?: string;
  accounts?: string[];
  /** What the configuration holds (a deep subset), or the code of the UsageError. */
  expected: Record<string, unknown> | { refused: string };
}

const STATE = path.resolve(RUN_DEFAULTS.stateDir);

const ROWS: Row[] = [
  {
    name: 'the defaults',
    expected: {
      dir: 'exports',
      dryRun: false,
      ledger: { stateDir: STATE, url: undefined, alone: false, moving: false, unreachableSeconds: 120 },
      service: { dialect: 'spec', sandbox: undefined, client: { concurrency: RUN_DEFAULTS.concurrency } },
      selection: undefined,
      engine: { retryErrored: false, wait: true, waitTimeoutMs: RUN_DEFAULTS.waitTimeoutSeconds * 1000 },
      outputs: { json: false, quiet: false, logFile: undefined, metricsFile: undefined },
    },
  },
  { name: '--dialect', flags: { dialect: 'kraken' }, expected: { service: { dialect: 'kraken' } } },
  { name: 'MIGRATE_DIALECT', env: { MIGRATE_DIALECT: 'kraken' }, expected: { service: { dialect: 'kraken' } } },
  { name: 'the mapping file', mapping: { dialect: 'kraken' }, expected: { service: { dialect: 'kraken' } } },
  {
    name: 'the flag wins over the environment',
    flags: { dialect: 'spec' },
    env: { MIGRATE_DIALECT: 'kraken' },
    expected: { service: { dialect: 'spec' } },
  },
  { name: "the state directory's recorded dialect", recorded: 'kraken', expected: { service: { dialect: 'kraken' } } },
  {
    name: 'another dialect than the recorded one',
    flags: { dialect: 'kraken' },
    recorded: 'spec',
    expected: { refused: 'dialect_mismatch' },
  },
  {
    name: 'another dialect, the ledger moved to the service',
    flags: { dialect: 'kraken', moveLedgerToService: true },
    recorded: 'spec',
    expected: { service: { dialect: 'kraken' }, ledger: { moving: true } },
  },
  { name: 'MIGRATE_DIALECT not a dialect', env: { MIGRATE_DIALECT: 'v3' }, expected: { refused: 'invalid_dialect' } },
  {
    name: 'a contract in the spec dialect',
    mapping: 'contract',
    expected: { refused: 'contract_needs_kraken_dialect' },
  },
  {
    name: 'a contract in the kraken dialect',
    mapping: 'contract',
    flags: { dialect: 'kraken' },
    expected: { service: { dialect: 'kraken' } },
  },
  { name: '--limit', flags: { limit: 20 }, expected: { selection: { limit: 20 }, ledger: { alone: true } } },
  {
    name: '--accounts',
    accounts: ['A-1', 'A-2'],
    expected: { selection: { limit: undefined, accounts: new Set(['A-1', 'A-2']) }, ledger: { alone: true } },
  },
  { name: '--max-errors N', flags: { maxErrors: { count: 5 } }, expected: { ledger: { alone: false } } },
  { name: '--max-errors N%', flags: { maxErrors: { percent: 2 } }, expected: { ledger: { alone: true } } },
  { name: '--retry-invalid', flags: { retryInvalid: ['x'] }, expected: { ledger: { alone: true } } },
  {
    name: '--retry-errored',
    flags: { retryErrored: true },
    expected: { engine: { retryErrored: true }, ledger: { states: expect.arrayContaining(['errored']) } },
  },
  {
    name: 'pace, waits and transaction flags',
    flags: { concurrency: 3, rate: 7, waitTimeout: 60, firstAnswerTimeout: 9, checkPreviouslyAdded: false },
    expected: {
      engine: {
        concurrency: 3,
        waitTimeoutMs: 60_000,
        transactionFlags: { check_previously_added: false, force_add_to_current_statement: true },
      },
      service: { client: { concurrency: 3, maxRequestsPerSecond: 7 }, firstAnswerMs: 9000 },
    },
  },
  { name: '--only', flags: { only: new Set(['note'] as const) }, expected: { engine: { steps: new Set(['note']) } } },
  { name: '--no-wait', flags: { wait: false }, expected: { engine: { wait: false } } },
  {
    name: 'MIGRATE_LEDGER_URL',
    env: { MIGRATE_LEDGER_URL: 'postgresql://migrate:secret@db:5432/acme' },
    expected: { ledger: { url: 'postgresql://migrate:secret@db:5432/acme' } },
  },
  {
    name: 'a password in --ledger',
    flags: { ledger: 'postgresql://migrate:secret@db:5432/acme' },
    expected: { refused: 'ledger_password_in_argv' },
  },
  { name: '--ledger-timeout', flags: { ledgerTimeout: 30 }, expected: { ledger: { unreachableSeconds: 30 } } },
  {
    name: '--sandbox with a configured supplier',
    flags: { sandbox: true },
    mapping: { importSupplier: 'ACME' },
    expected: { service: { sandbox: { processingMs: 50, suppliers: expect.objectContaining({ ACME: 'Ongoing' }) } } },
  },
  {
    name: 'the options recorded with the run: no secret',
    flags: { apiKeyFile: 'key.txt', ledger: 'postgresql://migrate@db/acme', only: new Set(['create'] as const) },
    expected: {
      recordedOptions: {
        apiKeyFile: '(given)',
        tokenFile: undefined,
        ledger: 'postgresql://migrate@db/acme',
        only: ['create'],
        exportDir: '/real/exports',
      },
    },
  },
  {
    name: 'the outputs',
    flags: { json: true, quiet: true, logFile: 'push.ndjson', metricsFile: 'm.prom', progressInterval: 5 },
    expected: {
      outputs: { json: true, quiet: true, logFile: 'push.ndjson', metricsFile: 'm.prom', progressInterval: 5 },
    },
  },
];

function inputsOf(row: Row): PushInputs {
  const mapping =
    row.mapping === 'contract' ? withContract : row.mapping === 'plain' ? plain : { ...plain, ...row.mapping };
  return {
    flags: { ...DEFAULT_FLAGS, ...row.flags },
    env: row.env ?? {},
    mappingFile: mapping,
    recorded: row.recorded === undefined ? undefined : { dialect: row.recorded, ledgerLabel: STATE },
    accounts: row.accounts === undefined ? undefined : new Set(row.accounts),
    exportFiles: { files: [], notRead: [] },
    exportRealPath: '/real/exports',
  };
}

function resolved(row: Row): PushConfig | { refused: string } {
  try {
    return resolvePushConfig(inputsOf(row));
  } catch (error) {
    if (error instanceof MigrateError && error.exitCode === 2) return { refused: error.code };
    throw error;
  }
}

describe('resolvePushConfig', () => {
  it.each(ROWS.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    expect(resolved(row)).toMatchObject(row.expected);
  });

  it('is frozen: the run cannot change its configuration', () => {
    const config = resolvePushConfig(inputsOf({ name: 'frozen', expected: {} }));
    for (const part of [config, config.ledger, config.service, config.engine, config.outputs, config.recordedOptions])
      expect(Object.isFrozen(part)).toBe(true);
  });

  it("is plain data: the dialect asked for is kept against a ledger's once it is open (a PostgreSQL ledger's)", () => {
    const config = resolvePushConfig(inputsOf({ name: 'open', flags: { dialect: 'kraken' }, expected: {} }));
    expect(JSON.parse(JSON.stringify(config.service.asked))).toEqual({ dialect: 'kraken', source: '--dialect' });
    expect(keptDialect(config.service.asked, undefined)).toBe('kraken');
    expect(() => keptDialect(config.service.asked, { dialect: 'spec', ledgerLabel: 'postgresql://db/acme' })).toThrow(
      /the state directory postgresql:\/\/db\/acme was pushed in the spec dialect/,
    );
    const functions = (value: unknown): number =>
      typeof value === 'function'
        ? 1
        : typeof value === 'object' && value !== null && !(value instanceof Set)
          ? Object.values(value).reduce((sum: number, part) => sum + functions(part), 0)
          : 0;
    expect(functions(config)).toBe(0);
  });
});
