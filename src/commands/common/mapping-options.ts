import type { Command } from 'commander';
import { loadMigrateConfig, type MigrateConfig } from '../../config/index.js';
import { parseDate } from './option-parsers.js';
import type { ShapeLimits } from '../../shape/index.js';

// The options of validate and push that say how the export is read: the mapping file, the import supplier where a
// record has none, and the tenant's contract (docs/real-platform.md "The tenant's contract"); the configuration they
// load, and what a run says about the contract it loaded.

export interface MappingFlags {
  dir: string;
  /** --shape-memory and --shape-temp-limit as given (common/shape-limits.ts); the engine sizes the others. */
  shapeLimits?: Partial<ShapeLimits>;
  supplier?: string;
  config?: string;
  contract?: string;
  /** --open-period-start: the first day of the service's open statement period. */
  openPeriodStart?: string;
  /** --force-add-to-current-statement / --no-...: wins over the mapping file's; undefined when neither is given. */
  forceAddToCurrentStatement?: boolean;
}

/** --supplier and --config. */
export function registerMappingOptions(command: Command): Command {
  return command
    .option(
      '--supplier <code>',
      'import supplier code where a record has none (else MIGRATE_SUPPLIER, else the mapping file)',
    )
    .option(
      '--config <file>',
      'mapping file (default: migrate.config.json in the export directory, else in the working directory)',
    );
}

/**
 * The service's open statement period (spec "Create transactions"): its first day, for validation to name the
 * transactions dated before it, and whether the service is to move them into it instead of refusing them.
 */
export function registerOpenPeriodOptions(command: Command): Command {
  return command
    .option(
      '--open-period-start <date>',
      "the first day of the service's open statement period: transactions dated before it are named (refused by " +
        'the service unless forcing is declared)',
      parseDate,
    )
    .option(
      '--force-add-to-current-statement',
      'transactions dated before the open statement period are moved into it by the service (a note pinned to the ' +
        'account) instead of refused (else "force_add_to_current_statement" under mapping.transactions; default no)',
    )
    .option('--no-force-add-to-current-statement', 'transactions outside the open statement period are refused');
}

/** The mapping file's configuration with the command's open statement period: its flags win over the file. */
export function withOpenPeriod<T extends MigrateConfig>(file: T, flags: MappingFlags): T {
  return {
    ...file,
    forceAddToCurrentStatement: flags.forceAddToCurrentStatement ?? file.forceAddToCurrentStatement,
    openPeriodStart: flags.openPeriodStart,
  };
}

/** The command's configuration: the mapping file (found from the export directory), the flags, the environment. */
export async function loadCommandConfig(flags: MappingFlags): Promise<MigrateConfig> {
  const config = await loadMigrateConfig({
    cwd: process.cwd(),
    exportDir: flags.dir,
    env: process.env,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
    ...(flags.supplier === undefined ? {} : { supplier: flags.supplier }),
    ...(flags.contract === undefined ? {} : { contractPath: flags.contract }),
  });
  if (config.shape === undefined || flags.shapeLimits === undefined) return config;
  return { ...config, shape: { ...config.shape, limits: flags.shapeLimits } };
}

export function registerContractOption(command: Command): Command {
  return command.option(
    '--contract <file>',
    "the tenant's OpenAPI document (fetched from /data-import/schema/ on its API host): every request body is " +
      'checked against it before anything is sent (or "contract" in the mapping file)',
  );
}

/** The contract's rules that could not be kept, on stderr: the user hears what is left unchecked. */
export function warnAboutContract(config: Pick<MigrateConfig, 'contract'>): void {
  for (const warning of config.contract?.warnings ?? [])
    process.stderr.write(`migrate: warning: contract ${config.contract?.title ?? ''}: ${warning}\n`);
}
