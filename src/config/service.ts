import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { InvalidArgumentError, type Command } from 'commander';
import { checkBaseUrl, isHeaderForm } from '../api/options.js';
import { shownUrl } from '../shown-url.js';
import {
  describeProxies,
  proxyFor,
  type ClientOptions,
  type Credentials,
  type HeaderForm,
  type ProxySettings,
} from '../api/index.js';
import { errnoOf, UsageError } from '../errors.js';
import { refuseUntrustedPath } from '../trusted-path.js';
import { nonEmpty, settingOf, SETTING_ENV } from './precedence.js';
import {
  DIALECTS,
  isDialect,
  NO_TENANT_FIELDS,
  type Contract,
  type Dialect,
  type TenantFields,
} from '../schema/index.js';
import { explicitProxySettings, loadProxySettings } from './proxy.js';

// Where the import service is and how to authenticate (docs/api-client.md): flags and
// environment (and the mapping file's dialect settings) -> one validated ServiceConfig. The only place that reads these
// variables. The API
// key comes from MIGRATE_API_KEY or a file (--api-key-file), never from a command-line value
// (argv is visible to every user of the machine via ps); a pre-obtained token likewise from
// MIGRATE_TOKEN or --token-file. The config object prints and serialises without its secrets.

/** The flags registerServiceOptions adds, as commander parses them. */
export interface ServiceFlags {
  baseUrl?: string | undefined;
  apiKeyFile?: string | undefined;
  tokenFile?: string | undefined;
  tokenField?: string | undefined;
  headerForm?: string | undefined;
  dialect?: Dialect | undefined;
  proxy?: string | undefined;
}

/** What the mapping file says about the service (src/config/index.ts MigrateConfig). */
export interface ServiceFileSettings {
  dialect: Dialect | undefined;
  taskParams: Record<string, unknown> | undefined;
  tenantFields: TenantFields;
  /** The tenant's contract: a --sandbox started for the command rehearses it. */
  contract?: Contract | undefined;
}

export interface LoadServiceConfigInput {
  flags: ServiceFlags;
  env: NodeJS.ProcessEnv;
  /** Relative files are read from here. */
  cwd: string;
  /** `--sandbox`: the in-process sandbox's URL and key replace flags and environment. */
  sandbox?: { url: string; apiKey: string } | undefined;
  /** The mapping file's dialect, task_params and tenant fields, when a command reads one. */
  file?: ServiceFileSettings | undefined;
  /** The dialect the command's resolved configuration chose (chooseDialect, once per command). */
  dialect: Dialect;
  /** What the command can do without a service URL, said when there is none (default: its --sandbox). */
  withoutUrl?: string | undefined;
}

export interface ServiceConfig {
  baseUrl: string;
  /** Hidden from JSON.stringify and util.inspect. */
  credentials: Credentials;
  tokenField: string | undefined;
  headerForm: HeaderForm | undefined;
  /** Where the credentials came from, for logs: e.g. 'MIGRATE_API_KEY', '--api-key-file key.txt'. */
  credentialSource: string;
  /** The wire format (docs/real-platform.md). */
  dialect: Dialect;
  /**
   * --proxy, else HTTPS_PROXY, HTTP_PROXY, NO_PROXY (config/proxy.ts); undefined: direct, and always for the built-in
   * sandbox and, without --proxy, for a service on a loopback address.
   */
  proxy: ProxySettings | undefined;
  taskParams: Record<string, unknown> | undefined;
  tenantFields: TenantFields;
}

/** Adds --base-url, --api-key-file, --token-file, --token-field, --header-form, --dialect, --proxy to a command. */
export function registerServiceOptions(command: Command): Command {
  return command
    .option('--base-url <url>', `the import service's base URL (https; or set ${SETTING_ENV.baseUrl})`)
    .option('--api-key-file <file>', `file holding the organisation API key (or set ${SETTING_ENV.apiKey})`)
    .option('--token-file <file>', `file holding a pre-obtained access token (or set ${SETTING_ENV.token})`)
    .option('--token-field <name>', 'root field of the token mutation (default obtainKrakenToken)')
    .option(
      '--header-form <form>',
      'Authorization header: "bare" token, "token" (Token <token>) or "jwt" (JWT <token>) (default bare)',
    )
    .option(
      '--dialect <dialect>',
      `wire format: "spec" or "kraken", the real platform's (or set ${SETTING_ENV.dialect}, or "dialect" in the ` +
        'mapping file) (default spec, or the one the ledger was pushed in)',
      parseDialectFlag,
    )
    .option(
      '--proxy <url>',
      'a proxy for every request to the service, one on this machine included (default: HTTPS_PROXY or ' +
        'HTTP_PROXY, which a service on a loopback address such as 127.0.0.1 does not go through)',
    );
}

/** Commander's parser of --dialect (also used by `migrate sandbox`). */
export function parseDialectFlag(value: string): Dialect {
  if (isDialect(value)) return value;
  throw new InvalidArgumentError(
    `expected ${DIALECTS.map((name) => `"${name}"`).join(' or ')}, got ${JSON.stringify(value)}.`,
  );
}

/** The dialect a command asks for and where it was asked (--dialect, MIGRATE_DIALECT, the mapping file), if any. */
export interface AskedDialect {
  readonly dialect: Dialect | undefined;
  readonly source: string;
}

/** The dialect a state directory was pushed in (the ledger's); `moving`: --move-ledger-to-service. */
export type RecordedDialectOf = { dialect: string; ledgerLabel: string; moving?: boolean | undefined } | undefined;

/** The dialect asked for: the flag, else the environment, else the mapping file; a bad variable is exit 2. */
export function askedDialect(input: {
  flags: ServiceFlags;
  env: NodeJS.ProcessEnv;
  file?: ServiceFileSettings | undefined;
}): AskedDialect {
  const { flags, env, file } = input;
  const fromEnv = nonEmpty(env[SETTING_ENV.dialect]);
  if (fromEnv !== undefined && !isDialect(fromEnv))
    throw new UsageError(
      `${SETTING_ENV.dialect}: expected "spec" or "kraken", got ${JSON.stringify(fromEnv)}`,
      'invalid_dialect',
    );
  const asked: Array<[Dialect | undefined, string]> = [
    [flags.dialect, '--dialect'],
    [fromEnv, SETTING_ENV.dialect],
    [file?.dialect, '"dialect" in the mapping file'],
  ];
  const [dialect, source] = asked.find(([value]) => value !== undefined) ?? [undefined, ''];
  return { dialect, source };
}

/**
 * The dialect a command sends in: the one asked for, against the one the state directory was pushed in (a state
 * directory keeps one dialect, unless the run moves the ledger on: config/ledger-service.ts); spec by default.
 */
export function keptDialect(asked: AskedDialect, recorded: RecordedDialectOf): Dialect {
  const { dialect, source } = asked;
  if (recorded === undefined) return dialect ?? 'spec';
  if (dialect === undefined || dialect === recorded.dialect) return recorded.dialect as Dialect;
  if (recorded.moving === true) return dialect;
  throw new UsageError(
    `${source} asks for the ${dialect} dialect, but the state directory ${recorded.ledgerLabel} was pushed in the ` +
      `${recorded.dialect} dialect; a state directory keeps one dialect. Run with --dialect ${recorded.dialect}, ` +
      `or push the ${dialect} dialect into a new --state directory (or, if the service itself now speaks it, move ` +
      `the ledger on with push --move-ledger-to-service).`,
    'dialect_mismatch',
  );
}

/**
 * The dialect of this run: --dialect, else MIGRATE_DIALECT, else the mapping file, else the one the state directory
 * was pushed in, else 'spec'. A state directory keeps its dialect: asking for the other one is refused (a rerun must
 * not mix request forms it cannot compare).
 */
export function chooseDialect(input: {
  flags: ServiceFlags;
  env: NodeJS.ProcessEnv;
  file?: ServiceFileSettings | undefined;
  recorded?: RecordedDialectOf;
}): Dialect {
  return keptDialect(askedDialect(input), input.recorded);
}

/** Reads a secret from a file: first line, trimmed. Errors name the file, never its content. */
async function readSecretFile(flag: string, file: string, cwd: string): Promise<string> {
  const path = resolve(cwd, file);
  let text: string;
  refuseUntrustedPath({ what: flag, path, secret: true });
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = errnoOf(error);
    throw new UsageError(
      `${flag} ${file}: cannot read the file (${typeof code === 'string' ? code : 'error'}); give a readable file ` +
        `holding the secret on its first line`,
      'secret_file_unreadable',
    );
  }
  const secret = text.split(/\r?\n/)[0]?.trim() ?? '';
  if (!secret)
    throw new UsageError(`${flag} ${file}: the file is empty; put the secret on its first line`, 'secret_file_empty');
  return secret;
}

function hideSecrets(credentials: Credentials, source: string): Credentials {
  const shown = `[credentials from ${source}]`;
  Object.defineProperty(credentials, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(credentials, inspect.custom, { value: () => shown, enumerable: false });
  return credentials;
}

function headerFormOf(value: string | undefined): HeaderForm | undefined {
  if (value === undefined || isHeaderForm(value)) return value;
  throw new UsageError(
    `--header-form: expected "bare", "token" or "jwt", got ${JSON.stringify(value)}`,
    'invalid_header_form',
  );
}

/**
 * The organisation API key and where it came from: the first line of --api-key-file FILE, else MIGRATE_API_KEY
 * (never a command-line value: other users of the machine read a process's arguments); undefined: neither is set.
 * `migrate sandbox` takes its own key the same way.
 */
export async function apiKeyOf(
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ apiKey: string; source: string } | undefined> {
  if (file !== undefined)
    return { apiKey: await readSecretFile('--api-key-file', file, cwd), source: `--api-key-file ${file}` };
  const apiKey = nonEmpty(env[SETTING_ENV.apiKey]);
  return apiKey === undefined ? undefined : { apiKey, source: SETTING_ENV.apiKey };
}

async function loadCredentials(input: LoadServiceConfigInput): Promise<{ credentials: Credentials; source: string }> {
  const { flags, env, cwd } = input;
  const key = await apiKeyOf(flags.apiKeyFile, env, cwd);
  const apiKey = key?.apiKey;
  const token =
    flags.tokenFile !== undefined
      ? await readSecretFile('--token-file', flags.tokenFile, cwd)
      : nonEmpty(env[SETTING_ENV.token]);
  const sources = [
    key?.source,
    token === undefined
      ? undefined
      : flags.tokenFile !== undefined
        ? `--token-file ${flags.tokenFile}`
        : SETTING_ENV.token,
  ].filter((item): item is string => item !== undefined);
  if (apiKey !== undefined) return { credentials: { apiKey, token }, source: sources.join(' + ') };
  if (token !== undefined) return { credentials: { token }, source: sources.join(' + ') };
  throw new UsageError(
    `no credentials for the import service: set ${SETTING_ENV.apiKey} or pass --api-key-file FILE (or a ` +
      `pre-obtained token: ${SETTING_ENV.token} or --token-file FILE); the key is never accepted as a ` +
      `command-line value`,
    'no_credentials',
  );
}

/** Flags, then environment; throws a UsageError naming the flag or variable at fault. */
export async function loadServiceConfig(input: LoadServiceConfigInput): Promise<ServiceConfig> {
  const { flags, env, sandbox } = input;
  const wire = {
    dialect: input.dialect,
    taskParams: input.file?.taskParams,
    tenantFields: input.file?.tenantFields ?? NO_TENANT_FIELDS,
  };
  const tokenField = settingOf('tokenField', flags.tokenField, env);
  const headerForm = headerFormOf(settingOf('headerForm', flags.headerForm, env));
  if (sandbox) {
    const credentials = hideSecrets({ apiKey: sandbox.apiKey }, 'the built-in sandbox');
    return {
      baseUrl: sandbox.url,
      credentials,
      tokenField,
      headerForm,
      credentialSource: 'the built-in sandbox',
      // The built-in sandbox runs in this process: reached directly, whatever the proxy variables say.
      proxy: undefined,
      ...wire,
    };
  }
  const baseUrl = settingOf('baseUrl', flags.baseUrl, env);
  if (baseUrl === undefined)
    throw new UsageError(
      `no service URL: pass --base-url URL or set ${SETTING_ENV.baseUrl} (${input.withoutUrl ?? 'or use --sandbox'})`,
      'no_base_url',
    );
  checkBaseUrl(baseUrl, flags.baseUrl !== undefined ? '--base-url' : SETTING_ENV.baseUrl);
  const proxy = proxyFor(
    new URL(baseUrl),
    flags.proxy === undefined ? loadProxySettings(env) : explicitProxySettings(flags.proxy),
  );
  const { credentials, source } = await loadCredentials(input);
  return {
    baseUrl,
    credentials: hideSecrets(credentials, source),
    tokenField,
    headerForm,
    credentialSource: source,
    proxy,
    ...wire,
  };
}

/** ClientOptions from the config; the engine adds concurrency, rate, events. */
export function serviceClientOptions(
  config: ServiceConfig,
  extra: Omit<ClientOptions, 'baseUrl' | 'credentials'> = {},
): ClientOptions {
  return {
    baseUrl: config.baseUrl,
    credentials: config.credentials,
    ...(config.tokenField === undefined ? {} : { tokenField: config.tokenField }),
    ...(config.headerForm === undefined ? {} : { headerForm: config.headerForm }),
    dialect: config.dialect,
    ...(config.proxy === undefined ? {} : { proxy: config.proxy }),
    ...(config.taskParams === undefined ? {} : { taskParams: config.taskParams }),
    tenantFields: config.tenantFields,
    ...extra,
  };
}

/** One line for logs and run records: where the service is and where the credentials came from. */
export function describeServiceConfig(config: ServiceConfig): string {
  const proxy = config.proxy === undefined ? '' : `; proxies: ${describeProxies(config.proxy)}`;
  return `${shownUrl(config.baseUrl)} (credentials from ${config.credentialSource}; ${config.dialect} dialect${proxy})`;
}
