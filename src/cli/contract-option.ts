import type { Command } from 'commander';
import type { MigrateConfig } from '../config/index.js';

// `--contract FILE` of validate and push (docs/real-platform.md "The tenant's contract"): the option and what a run
// says about the contract it loaded.

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
