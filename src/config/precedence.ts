// Where a setting comes from, in one order for every command (docs/operators-guide.md "One file per cohort"): the
// flag, else its environment variable, else a file (the run configuration, the mapping file), else the default. The
// variables are named here, once; a value of spaces only is no value.

/** The environment variable of each setting that has one. */
export const SETTING_ENV = {
  baseUrl: 'MIGRATE_BASE_URL',
  apiKey: 'MIGRATE_API_KEY',
  token: 'MIGRATE_TOKEN',
  tokenField: 'MIGRATE_TOKEN_FIELD',
  headerForm: 'MIGRATE_HEADER_FORM',
  dialect: 'MIGRATE_DIALECT',
  supplier: 'MIGRATE_SUPPLIER',
  ledger: 'MIGRATE_LEDGER_URL',
} as const;

/** A setting's value: the flag, else its environment variable, else the file's; undefined: the default applies. */
export function settingOf(
  setting: keyof typeof SETTING_ENV,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  file?: string,
): string | undefined {
  return nonEmpty(flag) ?? nonEmpty(env[SETTING_ENV[setting]]) ?? file;
}

/** A value trimmed; undefined when there is none or only spaces. */
export function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
