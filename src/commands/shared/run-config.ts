import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command, Option } from 'commander';
import { z } from 'zod';
import { UsageError } from '../../errors.js';
import { refuseUntrustedPath } from '../../trusted-path.js';

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
}

/** The keys a run configuration may hold, each the snake_case name of the option it sets. */
export const RUN_SETTINGS = {
  base_url: { env: 'MIGRATE_BASE_URL' },
  api_key_file: { env: 'MIGRATE_API_KEY', secret: true, path: true },
  token_file: { env: 'MIGRATE_TOKEN', secret: true, path: true },
  token_field: { env: 'MIGRATE_TOKEN_FIELD' },
  header_form: { env: 'MIGRATE_HEADER_FORM' },
  dialect: { env: 'MIGRATE_DIALECT' },
  contract: { path: true },
  config: { path: true },
  supplier: { env: 'MIGRATE_SUPPLIER' },
  state: { path: true },
  ledger: { env: 'MIGRATE_LEDGER_URL' },
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
    const code = (error as NodeJS.ErrnoException).code;
    if (named === undefined && code === 'ENOENT') return undefined;
    const by = flag === undefined ? RUN_CONFIG_ENV : RUN_CONFIG_FLAG;
    throw new UsageError(
      `run configuration ${file} (${by}) cannot be read (${code ?? String(error)}).`,
      'run_config_unreadable',
      error,
    );
  }
  return { file, settings: parseRunConfig(file, text) };
}

function parseRunConfig(file: string, text: string): RunConfig['settings'] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`run configuration ${file} is not JSON: ${(error as Error).message}.`, 'run_config_invalid');
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
    if ((RUN_SETTINGS[key] as Setting).path === true && typeof value === 'string')
      settings[key] = path.resolve(dir, value);
  }
  return settings;
}

/** Where a command's setting came from, for `migrate config show` and for the refusals below. */
export type SettingSource = 'flag' | 'environment' | 'file' | 'default';

const attributeOf = (key: SettingKey): string => key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

function optionOf(command: Command, key: SettingKey): Option | undefined {
  return command.options.find((option) => option.attributeName() === attributeOf(key) && !option.negate);
}

function sourceOf(command: Command, key: SettingKey, env: NodeJS.ProcessEnv): SettingSource {
  const source = command.getOptionValueSource(attributeOf(key));
  if (source === 'cli') return 'flag';
  if (source === 'config') return 'file';
  const variable = (RUN_SETTINGS[key] as Setting).env;
  if (variable !== undefined && (env[variable] ?? '') !== '') return 'environment';
  return 'default';
}

/**
 * Before a command's action: its settings the command line did not give, and the environment does not set, taken
 * from the run configuration (through each option's parser, as the flag would be). Then the ledger is one setting:
 * --state beside --ledger (or MIGRATE_LEDGER_URL) is refused instead of one of them being silently ignored.
 */
export function applyRunConfig(command: Command, env: NodeJS.ProcessEnv, cwd: string): void {
  const flag = command.getOptionValue('runConfig') as string | undefined;
  const config = findRunConfig(flag, env, cwd);
  if (config !== undefined) {
    const ledgerGiven = ['state', 'ledger'].some((key) => sourceOf(command, key as SettingKey, env) !== 'default');
    for (const key of SETTING_KEYS) {
      const value = config.settings[key];
      const option = optionOf(command, key);
      if (value === undefined || option === undefined || sourceOf(command, key, env) !== 'default') continue;
      if ((key === 'state' || key === 'ledger') && ledgerGiven) continue;
      command.setOptionValueWithSource(attributeOf(key), parsedValue(option, key, value, config.file), 'config');
    }
  }
  refuseTwoLedgers(command, env);
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
    throw new UsageError(`run configuration ${file}: ${key}: ${(error as Error).message}`, 'run_config_invalid', error);
  }
}

function refuseTwoLedgers(command: Command, env: NodeJS.ProcessEnv): void {
  if (optionOf(command, 'state') === undefined || optionOf(command, 'ledger') === undefined) return;
  const state = sourceOf(command, 'state', env);
  const ledger = sourceOf(command, 'ledger', env);
  if (state === 'default' || ledger === 'default') return;
  const named = (key: string, source: SettingSource): string =>
    source === 'flag' ? `--${key}` : source === 'file' ? `${key} in the run configuration` : 'MIGRATE_LEDGER_URL';
  throw new UsageError(
    `${named('state', state)} and ${named('ledger', ledger)} name two ledgers (a state directory's SQLite ledger and ` +
      'a PostgreSQL one); give the one this cohort uses.',
    'two_ledgers',
  );
}

/** The commands of a cohort: the sandbox and the ledger copy are not (they read no cohort's settings). */
const RUN_CONFIG_COMMANDS = ['push', 'validate', 'status', 'report'];

/** Adds --run-config to the commands that read a run configuration, and applies it before each of their actions. */
export function registerRunConfig(program: Command): void {
  for (const command of program.commands)
    if (RUN_CONFIG_COMMANDS.includes(command.name()))
      command.option(
        `${RUN_CONFIG_FLAG} <file>`,
        `the cohort's run configuration (else ${RUN_CONFIG_ENV}, else ./${RUN_CONFIG_FILE} if there is one)`,
      );
  program.hook('preAction', (_program, action) => {
    if (RUN_CONFIG_COMMANDS.includes(action.name())) applyRunConfig(action, process.env, process.cwd());
  });
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
  return SETTING_KEYS.flatMap((key) => {
    if (optionOf(command, key) === undefined) return [];
    const source = sourceOf(command, key, env);
    const setting: Setting = RUN_SETTINGS[key];
    if (source !== 'environment' || setting.env === undefined)
      return [{ key, value: command.getOptionValue(attributeOf(key)) as unknown, source }];
    return [{ key, value: setting.secret === true ? undefined : env[setting.env], source, variable: setting.env }];
  });
}
