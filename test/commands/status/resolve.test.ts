import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StatusFlags } from '../../../src/commands/status/flags.js';
import {
  resolveStatusConfig,
  statusLedgerPlace,
  type RecordedLedger,
  type StatusConfig,
} from '../../../src/commands/status/resolve.js';
import { refusalCode } from '../refusal-code.js';

// `migrate status`'s configuration as a table: flags (as commander parses them), environment and what the ledger
// recorded in; the one configuration, or the refusal's code, out.

const FLAGS: StatusFlags = { state: '.migrate', maxRows: 20, maxStatusChecks: 500 };
const SERVICE = { url: 'https://api.example.org/v1', dialect: 'spec' };
const LEDGER: RecordedLedger = { label: '/srv/acme', suppliers: ['ACME'], dialect: 'spec', service: SERVICE };

interface Case {
  name: string;
  flags?: Partial<StatusFlags>;
  env?: NodeJS.ProcessEnv;
  recorded?: RecordedLedger;
  expected: Partial<StatusConfig> | { refused: string };
}

const CASES: Case[] = [
  {
    name: 'no ledger, no flags: the spec dialect, the summary as text',
    expected: {
      supplier: 'ACME',
      ledgerLabel: undefined,
      account: undefined,
      json: false,
      maxRows: 20,
      maxStatusChecks: 500,
      service: { flags: { dialect: 'spec' }, recorded: undefined },
    },
  },
  {
    name: 'the ledger: its label, its dialect and its service',
    recorded: { ...LEDGER, dialect: 'kraken', service: { ...SERVICE, dialect: 'kraken' } },
    expected: {
      ledgerLabel: '/srv/acme',
      service: { flags: { dialect: 'kraken' }, recorded: { ...SERVICE, dialect: 'kraken' } },
    },
  },
  {
    name: 'MIGRATE_DIALECT without a ledger',
    env: { MIGRATE_DIALECT: 'kraken' },
    expected: { service: { flags: { dialect: 'kraken' }, recorded: undefined } },
  },
  {
    name: 'the service flags pass through with the dialect chosen',
    flags: { baseUrl: 'https://api.example.org/v1', apiKeyFile: 'key.txt', json: true, maxRows: 3 },
    recorded: LEDGER,
    expected: {
      json: true,
      maxRows: 3,
      service: {
        flags: { baseUrl: 'https://api.example.org/v1', apiKeyFile: 'key.txt', dialect: 'spec' },
        recorded: SERVICE,
      },
    },
  },
  {
    name: '--dialect other than the ledger one is refused',
    flags: { dialect: 'kraken' },
    recorded: LEDGER,
    expected: { refused: 'dialect_mismatch' },
  },
  {
    name: '--offline: no service, so no dialect to refuse',
    flags: { offline: true, dialect: 'kraken' },
    recorded: LEDGER,
    expected: { service: undefined, ledgerLabel: '/srv/acme' },
  },
  {
    name: 'a supplier the ledger holds no account of is refused',
    recorded: { ...LEDGER, suppliers: ['ACME-2'] },
    expected: { refused: 'supplier_not_in_ledger' },
  },
  {
    name: 'an empty ledger is refused too',
    recorded: { ...LEDGER, suppliers: [] },
    expected: { refused: 'supplier_not_in_ledger' },
  },
  {
    name: "--account tells one account's story whatever supplier codes the ledger holds",
    flags: { account: 'A-1' },
    recorded: { ...LEDGER, suppliers: [] },
    expected: { account: 'A-1' },
  },
];

describe('resolveStatusConfig', () => {
  it.each(CASES)('$name', ({ flags, env, recorded, expected }) => {
    const input = { supplier: 'ACME', flags: { ...FLAGS, ...flags }, env: env ?? {}, recorded };
    if ('refused' in expected) {
      expect(refusalCode(() => resolveStatusConfig(input))).toBe(expected.refused);
      return;
    }
    expect(resolveStatusConfig(input)).toMatchObject(expected);
  });

  it('is complete and immutable', () => {
    const config = resolveStatusConfig({ supplier: 'ACME', flags: FLAGS, env: {}, recorded: undefined });
    expect(Object.keys(config).sort()).toEqual(
      ['account', 'json', 'ledgerLabel', 'maxRows', 'maxStatusChecks', 'service', 'supplier'].sort(),
    );
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('names the codes the ledger holds when the supplier is not among them', () => {
    const input = { supplier: 'acme', flags: FLAGS, env: {}, recorded: { ...LEDGER, suppliers: ['ACME', 'BETA'] } };
    expect(() => resolveStatusConfig(input)).toThrow(/holds "ACME", "BETA" \(codes are case-sensitive\)/);
  });
});

describe('statusLedgerPlace', () => {
  it.each([
    ['the state directory, resolved', {}, {}, { stateDir: resolve('.migrate'), url: undefined, required: false }],
    ['--offline needs the ledger', { offline: true }, {}, { required: true }],
    ['MIGRATE_LEDGER_URL', {}, { MIGRATE_LEDGER_URL: 'postgresql://m@db/acme' }, { url: 'postgresql://m@db/acme' }],
    [
      '--ledger wins',
      { ledger: 'postgresql://m@db/b' },
      { MIGRATE_LEDGER_URL: 'postgresql://m@db/a' },
      { url: 'postgresql://m@db/b' },
    ],
  ] as const)('%s', (_name, flags, env, expected) => {
    expect(statusLedgerPlace({ ...FLAGS, ...flags }, env)).toMatchObject(expected);
  });

  it('refuses a password on the command line, and what is not a PostgreSQL URL', () => {
    expect(refusalCode(() => statusLedgerPlace({ ...FLAGS, ledger: 'postgresql://m:pw@db/acme' }, {}))).toBe(
      'ledger_password_in_argv',
    );
    expect(refusalCode(() => statusLedgerPlace(FLAGS, { MIGRATE_LEDGER_URL: 'mysql://db/acme' }))).toBe(
      'ledger_url_invalid',
    );
  });
});
