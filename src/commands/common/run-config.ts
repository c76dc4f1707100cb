import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command, Option } from 'commander';
import { z } from 'zod';
import { nonEmpty, SETTING_ENV } from '../../config/precedence.js';
import { errnoOf, messageOf, UsageError } from '../../errors.js';
import { formatSize, shapeLimits } from '../../shape/index.js';
import { shownUrl, type UrlForm } from '../../shown-url.js';
import { refuseUntrustedPath } from '../../trusted-path.js';
import { runOriginOf, sayRunOrigin, type RunOrigin, type ServiceUse } from './run-origin.js';

// The run configuration (docs/operators-guide.md "One file per cohort"): what every command of a cohort repeats
// (the service, the key file, the ledger, the supplier, the pace, the log and metrics), written once in a JSON file
// that push, validate, status and report all read, so that two commands can never look at two ledgers by accident.
// A flag wins over the environment, which wins over the file, which wins over the default. The file's values go
// through each option's own parser (a bad value is refused as the flag would be), and its relative paths are
// relative to the file. It holds no secret: the key stays in its file or in MIGRATE_API_KEY, and a ledger URL with a
// password is refused as on the command line.

export const RUN_CONFIG_FILE = 'migrate.run.json';
export const RUN_CONFIG_ENV = 'MIGRATE_RUN_CONFIG';
const RUN_CONFIG_FLAG = '--run-config';

interface Setting {
  /** The environment variable that sets the same thing, if any: it wins over the file. */
  env?: string;
  /** The variable holds a secret (the key or token itself): never shown. */
  secret?: boolean;
  /** A path, resolved from the file's directory. */
  path?: boolean;
  /** A size in bytes (the shape engine's): shown as one, and its default as the engine sizes it on this machine. */
  size?: 'memory' | 'tempDisk';
  /** A URL: shown without its password (shown-url.ts). */
  url?: UrlForm;
}

/** The keys a run configuration may hold, each the snake_case name of the option it sets. */
export const RUN_SETTINGS = {
  base_url: { env: SETTING_ENV.baseUrl, url: 'service' },
  api_key_file: { env: SETTING_ENV.apiKey, secret: true, path: true },
  token_file: { env: SETTING_ENV.token, secret: true, path: true },
  token_field: { env: SETTING_ENV.tokenField },
  header_form: { env: SETTING_ENV.headerForm },
  dialect: { env: SETTING_ENV.dialect },
  contract: { path: true },
  config: { path: true },
  supplier: { env: SETTING_ENV.supplier },
  state: { path: true },
  ledger: { env: SETTING_ENV.ledger, url: 'ledger' },
  ledger_timeout: {},
  concurrency: {},
  rate: {},
  wait_timeout: {},
  max_errors: {},
  log_file: { path: true },
  metrics_file: { path: true },
  metrics_interval: {},
  progress_interval: {},
  quiet: {},
  open_period_start: {},
  force_add_to_current_statement: {},
  shape_memory: { env: 'MIGRATE_SHAPE_MEMORY', size: 'memory' },
  shape_temp_limit: { env: 'MIGRATE_SHAPE_TEMP_LIMIT', size: 'tempDisk' },
} as const satisfies Record<string, Setting>;

type SettingKey = keyof typeof RUN_SETTINGS;
const SETTING_KEYS = Object.keys(RUN_SETTINGS) as SettingKey[];

const runConfigSchema = z.strictObject(
  Object.fromEntries(
    SETTING_KEYS.map((key) => [key, z.union([z.string().min(1), z.number(), z.boolean()]).optional()]),
  ) as Record<SettingKey, z.ZodOptional<z.ZodUnion<[z.ZodString, z.ZodNumber, z.ZodBoolean]>>>,
);

export interface RunConfig {
  file: string;
  /** How it was found: --run-config, MIGRATE_RUN_CONFIG, or in the working directory. */
  by: string;
  settings: Partial<Record<SettingKey, string | number | boolean>>;
}

/** The run configuration a command reads: --run-config, else MIGRATE_RUN_CONFIG, else ./migrate.run.json if any. */
export function findRunConfig(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): RunConfig | undefined {
  const named = flag ?? (env[RUN_CONFIG_ENV] || undefined);
  const file = path.resolve(cwd, named ?? RUN_CONFIG_FILE);
  let text: string;
  // It names the service and the key file: one another user planted or can change is refused, not obeyed.
  if (named !== undefined || existsSync(file)) refuseUntrustedPath({ what: 'run configuration', path: file });
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = errnoOf(error);
    if (named === undefined && code === 'ENOENT') return undefined;
    const by = flag === undefined ? RUN_CONFIG_ENV : RUN_CONFIG_FLAG;
    throw new UsageError(
      `run configuration ${file} (${by}) cannot be read (${code ?? String(error)}).`,
      'run_config_unreadable',
      error,
    );
  }
  const by =
    flag !== undefined ? RUN_CONFIG_FLAG : named !== undefined ? RUN_CONFIG_ENV : 'found in the working directory';
  return { file, by, settings: parseRunConfig(file, text) };
}

/** Why a command reads no run configuration, as its first line says. */
export const NO_RUN_CONFIG = `no ${RUN_CONFIG_FILE} here, ${RUN_CONFIG_ENV} not set`;

function parseRunConfig(file: string, text: string): RunConfig['settings'] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`run configuration ${file} is not JSON: ${messageOf(error)}.`, 'run_config_invalid');
  }
  const parsed = runConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(top level)';
    const unknown = issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : undefined;
    throw new UsageError(
      unknown === undefined
        ? `run configuration ${file}: ${where}: ${issue?.message ?? 'invalid'}.`
        : `run configuration ${file}: unknown key ${unknown}; the keys are ${SETTING_KEYS.join(', ')}.`,
      'run_config_invalid',
    );
  }
  const settings = parsed.data as RunConfig['settings'];
  if (settings.state !== undefined && settings.ledger !== undefined)
    throw new UsageError(
      `run configuration ${file} names two ledgers (state and ledger); keep the one the cohort uses.`,
      'run_config_two_ledgers',
    );
  const dir = path.dirname(file);
  for (const key of SETTING_KEYS) {
    const value = settings[key];
    if (settingOf(key).path === true && typeof value === 'string') settings[key] = path.resolve(dir, value);
  }
  return settings;
}

const settingOf = (key: SettingKey): Setting => RUN_SETTINGS[key];

/** The two settings that name the ledger: one of them at most. */
const LEDGER_KEYS: readonly SettingKey[] = ['state', 'ledger'];

/** What commander holds for the option of `key` (its parser's value). */
function optionValueOf(command: Command, key: SettingKey): unknown {
  const value: unknown = command.getOptionValue(attributeOf(key));
  return value;
}

/** Where a command's setting came from, for `migrate config show` and for the refusals below. */
export type SettingSource = 'flag' | 'environment' | 'file' | 'default';

const attributeOf = (key: SettingKey): string => key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

function optionOf(command: Command, key: SettingKey): Option | undefined {
  return command.options.find((option) => option.attributeName() === attributeOf(key) && !option.negate);
}

export function settingSource(command: Command, key: SettingKey, env: NodeJS.ProcessEnv): SettingSource {
  const source = command.getOptionValueSource(attributeOf(key));
  if (source === 'cli') return 'flag';
  if (source === 'config') return 'file';
  const variable = settingOf(key).env;
  if (variable !== undefined && nonEmpty(env[variable]) !== undefined) return 'environment';
  return 'default';
}

/**
 * Before a command's action: its settings the command line did not give, and the environment does not set, taken
 * from the run configuration (through each option's parser, as the flag would be). Then the ledger is one setting:
 * --state beside --ledger (or MIGRATE_LEDGER_URL) is refused instead of one of them being silently ignored.
 */
export function applyRunConfig(command: Command, env: NodeJS.ProcessEnv, cwd: string): RunConfig | undefined {
  const given: unknown = command.getOptionValue('runConfig');
  const flag = typeof given === 'string' ? given : undefined;
  const config = findRunConfig(flag, env, cwd);
  if (config !== undefined) {
    const ledgerGiven = LEDGER_KEYS.some((key) => settingSource(command, key, env) !== 'default');
    for (const key of SETTING_KEYS) {
      const value = config.settings[key];
      const option = optionOf(command, key);
      if (value === undefined || option === undefined || settingSource(command, key, env) !== 'default') continue;
      if ((key === 'state' || key === 'ledger') && ledgerGiven) continue;
      command.setOptionValueWithSource(attributeOf(key), parsedValue(option, key, value, config.file), 'config');
    }
  }
  refuseTwoLedgers(command, env);
  return config;
}

function parsedValue(option: Option, key: SettingKey, value: string | number | boolean, file: string): unknown {
  const takesValue = option.required || option.optional;
  if (!takesValue) {
    if (typeof value !== 'boolean')
      throw new UsageError(
        `run configuration ${file}: ${key} is true or false, not ${JSON.stringify(value)}.`,
        'run_config_invalid',
      );
    return value;
  }
  if (typeof value === 'boolean')
    throw new UsageError(
      `run configuration ${file}: ${key} takes a value (as ${option.flags} does), not ${value}.`,
      'run_config_invalid',
    );
  const text = String(value);
  if (option.parseArg === undefined) return text;
  try {
    return option.parseArg(text, undefined);
  } catch (error) {
    throw new UsageError(`run configuration ${file}: ${key}: ${messageOf(error)}`, 'run_config_invalid', error);
  }
}

function refuseTwoLedgers(command: Command, env: NodeJS.ProcessEnv): void {
  if (optionOf(command, 'state') === undefined || optionOf(command, 'ledger') === undefined) return;
  const state = settingSource(command, 'state', env);
  const ledger = settingSource(command, 'ledger', env);
  if (state === 'default' || ledger === 'default') return;
  const named = (key: string, source: SettingSource): string =>
    source === 'flag' ? `--${key}` : source === 'file' ? `${key} in the run configuration` : SETTING_ENV.ledger;
  throw new UsageError(
    `${named('state', state)} and ${named('ledger', ledger)} name two ledgers (a state directory's SQLite ledger and ` +
      'a PostgreSQL one); give the one this cohort uses.',
    'two_ledgers',
  );
}

type Options = Record<string, unknown>;

/**
 * The commands of a cohort (the sandbox and the ledger commands are not: they read no cohort's settings), each with
 * how it reaches the service given its options.
 */
const RUN_CONFIG_COMMANDS: Readonly<Record<string, (options: Options) => ServiceUse>> = {
  push: (options) => (options['sandbox'] === true ? 'sandbox' : 'service'),
  validate: (options) => (options['remote'] !== true ? 'none' : options['sandbox'] === true ? 'sandbox' : 'service'),
  status: (options) => (options['offline'] === true ? 'none' : 'service'),
  report: () => 'none',
  shape: () => 'none',
};

const origins = new WeakMap<Command, RunOrigin>();

/**
 * Adds --run-config to the commands that read a run configuration, and applies it before each of their actions; then
 * the action's first line says which run configuration it read and which service it talks to (run-origin.ts).
 */
export function registerRunConfig(program: Command): void {
  for (const command of program.commands)
    if (command.name() in RUN_CONFIG_COMMANDS)
      command.option(
        `${RUN_CONFIG_FLAG} <file>`,
        `the cohort's run configuration (else ${RUN_CONFIG_ENV}, else ./${RUN_CONFIG_FILE} if there is one)`,
      );
  program.hook('preAction', (_program, action) => {
    const useOf = RUN_CONFIG_COMMANDS[action.name()];
    if (useOf === undefined) return;
    const config = applyRunConfig(action, process.env, process.cwd());
    const found = { file: config?.file, by: config?.by ?? NO_RUN_CONFIG };
    const origin = runOriginOf(action, found, useOf(action.opts()), process.env);
    origins.set(action, origin);
    sayRunOrigin(origin, process.env);
  });
}

/** What the command's first line said (undefined: it was not run through the program, as in-process tests run it). */
export function runOriginOfCommand(command: Command): RunOrigin | undefined {
  return origins.get(command);
}

/** One resolved setting of a command, as `migrate config show` prints it. */
export interface ShownSetting {
  key: SettingKey;
  /** undefined: not set, or a secret (then `variable` names where it is). */
  value: unknown;
  source: SettingSource;
  /** The environment variable it came from, when it did. */
  variable?: string;
}

/** Every run setting `command` has, with its value and where it came from (after applyRunConfig); no secret. */
export function shownSettings(command: Command, env: NodeJS.ProcessEnv): ShownSetting[] {
  return SETTING_KEYS.flatMap((key): ShownSetting[] =>
    shownSetting(command, env, key).map((setting) => {
      const form: UrlForm | undefined = (RUN_SETTINGS[key] as Setting).url;
      return form === undefined || typeof setting.value !== 'string'
        ? setting
        : { ...setting, value: shownUrl(setting.value, form) };
    }),
  );
}

function shownSetting(command: Command, env: NodeJS.ProcessEnv, key: SettingKey): ShownSetting[] {
  if (optionOf(command, key) === undefined) return [];
  const source = settingSource(command, key, env);
  const setting: Setting = RUN_SETTINGS[key];
  if (setting.size !== undefined && source !== 'environment')
    return [{ key, value: shownSize(setting.size, command.getOptionValue(attributeOf(key))), source }];
  if (source !== 'environment' || setting.env === undefined)
    return [{ key, value: optionValueOf(command, key), source }];
  return [{ key, value: setting.secret === true ? undefined : env[setting.env], source, variable: setting.env }];
}

/** A size setting as given, or, not given, the engine's default on this machine and what it was sized from. */
function shownSize(limit: 'memory' | 'tempDisk', bytes: unknown): string {
  if (typeof bytes === 'number') return formatSize(bytes);
  const sized = shapeLimits({}, os.tmpdir())[limit];
  return `${formatSize(sized.bytes)} (${sized.basis ?? 'default'})`;
}
