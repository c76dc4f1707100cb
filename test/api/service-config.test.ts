import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseDialect,
  loadServiceConfig,
  registerServiceOptions,
  serviceClientOptions,
  type ServiceFlags,
} from '../../src/config/service.js';
import { UsageError } from '../../src/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'migrate-service-'));
  await writeFile(join(dir, 'key.txt'), 'file-key-123456\nignored second line\n', { mode: 0o600 });
  await writeFile(join(dir, 'open-key.txt'), 'open-key-123456\n');
  await chmod(join(dir, 'open-key.txt'), 0o644);
  await writeFile(join(dir, 'empty.txt'), '\n', { mode: 0o600 });
  await writeFile(join(dir, 'token.txt'), 'pre-obtained-token\n', { mode: 0o600 });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const load = (flags: ServiceFlags, env: NodeJS.ProcessEnv = {}) =>
  loadServiceConfig({ flags, env, cwd: dir, dialect: 'spec' });
const url = 'https://api.example.energy';

describe('loadServiceConfig', () => {
  it('the key from MIGRATE_API_KEY; base URL from the flag, else MIGRATE_BASE_URL', async () => {
    const config = await load({ baseUrl: url }, { MIGRATE_API_KEY: 'env-key-123456' });
    expect(config).toMatchObject({ baseUrl: url, credentialSource: 'MIGRATE_API_KEY' });
    expect(config.credentials).toEqual({ apiKey: 'env-key-123456', token: undefined });
    const fromEnv = await load({}, { MIGRATE_API_KEY: 'env-key-123456', MIGRATE_BASE_URL: 'http://127.0.0.1:9000' });
    expect(fromEnv.baseUrl).toBe('http://127.0.0.1:9000');
  });

  it('--api-key-file wins over the environment; first line, trimmed; relative to cwd', async () => {
    const config = await load({ baseUrl: url, apiKeyFile: 'key.txt' }, { MIGRATE_API_KEY: 'env-key-123456' });
    expect(config.credentials.apiKey).toBe('file-key-123456');
    expect(config.credentialSource).toBe('--api-key-file key.txt');
  });

  it('a key file others can read is refused, naming its owner and mode, as ssh refuses an open private key', async () => {
    const refused = load({ baseUrl: url, apiKeyFile: 'open-key.txt' });
    await expect(refused).rejects.toThrow(UsageError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `^--api-key-file ${join(dir, 'open-key.txt')} can be read by other users \\(owner .*uid ${process.getuid?.()}\\), ` +
          'mode 0644\\); .*chmod 600 ',
      ),
    );
  });

  it('a pre-obtained token, alone or with a key', async () => {
    expect((await load({ baseUrl: url }, { MIGRATE_TOKEN: 'env-token-123' })).credentials).toEqual({
      token: 'env-token-123',
    });
    const both = await load({ baseUrl: url, tokenFile: 'token.txt' }, { MIGRATE_API_KEY: 'env-key-123456' });
    expect(both.credentials).toEqual({ apiKey: 'env-key-123456', token: 'pre-obtained-token' });
    expect(both.credentialSource).toBe('MIGRATE_API_KEY + --token-file token.txt');
  });

  it.each([
    [{ baseUrl: url }, {}, /no credentials.*MIGRATE_API_KEY.*--api-key-file/],
    [{}, { MIGRATE_API_KEY: 'k-123456' }, /no service URL.*--base-url/],
    [{ baseUrl: 'http://api.example.energy' }, { MIGRATE_API_KEY: 'k-123456' }, /--base-url: expected an https URL/],
    [
      {},
      { MIGRATE_API_KEY: 'k-123456', MIGRATE_BASE_URL: 'http://10.0.0.1' },
      /MIGRATE_BASE_URL: expected an https URL/,
    ],
    [{ baseUrl: url, apiKeyFile: 'missing.txt' }, {}, /--api-key-file missing\.txt: cannot read the file \(ENOENT\)/],
    [{ baseUrl: url, apiKeyFile: 'empty.txt' }, {}, /--api-key-file empty\.txt: the file is empty/],
    [
      { baseUrl: url, headerForm: 'Bearer' },
      { MIGRATE_API_KEY: 'k-123456' },
      /--header-form: expected "bare", "token" or "jwt"/,
    ],
  ] as Array<[ServiceFlags, NodeJS.ProcessEnv, RegExp]>)('refuses %j %j', async (flags, env, message) => {
    const error = await load(flags, env).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  it('--sandbox replaces URL and key', async () => {
    const config = await loadServiceConfig({
      flags: {},
      env: {},
      cwd: dir,
      dialect: 'spec',
      sandbox: { url: 'http://127.0.0.1:5555', apiKey: 'sandbox-api-key' },
    });
    expect(config).toMatchObject({ baseUrl: 'http://127.0.0.1:5555', credentialSource: 'the built-in sandbox' });
    expect(config.credentials.apiKey).toBe('sandbox-api-key');
  });

  it('to client options, with header form and token field', async () => {
    const config = await load(
      { baseUrl: url, headerForm: 'token', tokenField: 'obtainToken' },
      { MIGRATE_API_KEY: 'env-key-123456' },
    );
    expect(serviceClientOptions(config, { concurrency: 4 })).toMatchObject({
      baseUrl: url,
      headerForm: 'token',
      tokenField: 'obtainToken',
      concurrency: 4,
      credentials: { apiKey: 'env-key-123456' },
    });
  });
});

describe('registerServiceOptions', () => {
  it('adds the flags, and no flag takes the key itself', () => {
    const command = registerServiceOptions(new Command('push').exitOverride());
    command.parse(['--base-url', url, '--api-key-file', 'k.txt', '--header-form', 'token'], { from: 'user' });
    expect(command.opts()).toEqual({ baseUrl: url, apiKeyFile: 'k.txt', headerForm: 'token' });
    expect(command.options.map((option) => option.long)).not.toContain('--api-key');
  });
});

describe('the dialect', () => {
  const file = (dialect?: 'spec' | 'kraken') => ({
    dialect,
    taskParams: undefined,
    tenantFields: { accounts: {}, supply_addresses: {} },
  });
  const recorded = (dialect: string) => ({ dialect, ledgerLabel: '/state' });

  it('--dialect, else MIGRATE_DIALECT, else the mapping file, else spec', () => {
    expect(chooseDialect({ flags: {}, env: {} })).toBe('spec');
    expect(chooseDialect({ flags: {}, env: {}, file: file('kraken') })).toBe('kraken');
    expect(chooseDialect({ flags: {}, env: { MIGRATE_DIALECT: 'kraken' }, file: file('spec') })).toBe('kraken');
    expect(chooseDialect({ flags: { dialect: 'spec' }, env: { MIGRATE_DIALECT: 'kraken' } })).toBe('spec');
    expect(() => chooseDialect({ flags: {}, env: { MIGRATE_DIALECT: 'octopus' } })).toThrow(
      /MIGRATE_DIALECT: expected "spec" or "kraken", got "octopus"/,
    );
  });

  it("keeps the state directory's dialect; asking for the other is a usage error (exit 2) naming both and the way out", () => {
    expect(chooseDialect({ flags: {}, env: {}, recorded: recorded('kraken') })).toBe('kraken');
    expect(chooseDialect({ flags: { dialect: 'kraken' }, env: {}, recorded: recorded('kraken') })).toBe('kraken');
    let error: unknown;
    try {
      chooseDialect({ flags: {}, env: {}, file: file('kraken'), recorded: recorded('spec') });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as UsageError).message).toBe(
      '"dialect" in the mapping file asks for the kraken dialect, but the state directory /state was pushed in the spec dialect; a state directory keeps one dialect. Run with --dialect spec, or push the kraken dialect into a new --state directory (or, if the service itself now speaks it, move the ledger on with push --move-ledger-to-service).',
    );
  });

  it('goes into the client options with task_params and tenant fields; --dialect is parsed by commander', async () => {
    const config = await loadServiceConfig({
      flags: { baseUrl: url, dialect: 'kraken' },
      env: { MIGRATE_API_KEY: 'env-key-123456' },
      cwd: dir,
      dialect: 'kraken',
      file: {
        ...file(),
        taskParams: { is_dry_run: false },
        tenantFields: { accounts: {}, supply_addresses: { meter_points: 'array' } },
      },
    });
    expect(serviceClientOptions(config)).toMatchObject({
      dialect: 'kraken',
      taskParams: { is_dry_run: false },
      tenantFields: { supply_addresses: { meter_points: 'array' } },
    });
    const command = registerServiceOptions(
      new Command('x').exitOverride().configureOutput({ writeErr: () => undefined }),
    );
    expect(command.parse(['--dialect', 'kraken'], { from: 'user' }).opts()['dialect']).toBe('kraken');
    expect(() => command.parse(['--dialect', 'octopus'], { from: 'user' })).toThrow(/expected "spec" or "kraken"/);
  });
});
