import type { Command } from 'commander';
import { loadMigrateConfig, type MigrateConfig } from '../../config/index.js';

// The options of validate and push that say how the export is read: the mapping file, the import supplier where a
// record has none, and the tenant's contract (docs/real-platform.md "The tenant's contract"); the configuration they
// load, and what a run says about the contract it loaded.

export interface MappingFlags {
  dir: string;
  supplier?: string;
  config?: string;
  contract?: string;
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

/** The command's configuration: the mapping file (found from the export directory), the flags, the environment. */
export function loadCommandConfig(flags: MappingFlags): Promise<MigrateConfig> {
  return loadMigrateConfig({
    cwd: process.cwd(),
    exportDir: flags.dir,
    env: process.env,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
    ...(flags.supplier === undefined ? {} : { supplier: flags.supplier }),
    ...(flags.contract === undefined ? {} : { contractPath: flags.contract }),
  });
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
