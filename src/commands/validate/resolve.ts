import type { ServiceFlags } from '../../config/service.js';
import { checkContractDialect, type MigrateConfig } from '../../config/index.js';
import { chooseDialect } from '../../config/service.js';
import { UsageError } from '../../errors.js';
import type { Dialect } from '../../schema/index.js';
import { withOpenPeriod, type MappingFlags } from '../common/mapping-options.js';
import type { ValidateFlags } from './flags.js';
import { showKeysOf } from './validate-show.js';

// `migrate validate`'s one configuration, resolved once from what commander parsed (after the run configuration), the
// environment and the mapping file read before it; pure. After it nothing reads a flag.

export interface ValidateConfig {
  readonly dir: string;
  readonly json: boolean;
  readonly errorsCsv: string | undefined;
  readonly allowNoAccounts: boolean;
  /** --show: the external account numbers whose rows, records and requests are shown. */
  readonly show: readonly string[] | undefined;
  /** Payloads are checked for the dialect push would send them in (--dialect, MIGRATE_DIALECT, the mapping file). */
  readonly dialect: Dialect;
  /** The mapping file's configuration, in that dialect. */
  readonly mapping: MigrateConfig;
  /** --remote: the service's validate endpoint (or the built-in sandbox's), this many requests in flight at most. */
  readonly remote:
    { readonly sandbox: boolean; readonly concurrency: number; readonly flags: ServiceFlags } | undefined;
}

/** What the mapping file is read with: before the configuration is resolved, as it needs the file. */
export function mappingFlagsOf(dir: string, flags: ValidateFlags): MappingFlags {
  return {
    ...{ dir, supplier: flags.supplier, config: flags.config, contract: flags.contract },
    ...(flags.shapeLimits === undefined ? {} : { shapeLimits: flags.shapeLimits }),
  };
}

export function resolveValidateConfig(input: {
  dir: string;
  flags: ValidateFlags;
  env: NodeJS.ProcessEnv;
  file: MigrateConfig;
}): ValidateConfig {
  const { dir, flags, env, file } = input;
  const { json, errorsCsv, remote, sandbox, allowNoAccounts, show, concurrency, shapeLimits: _, ...rest } = flags;
  if (show !== undefined && json)
    throw new UsageError('--show prints for people; leave out --json (or run validate twice).', 'show_with_json');
  if (sandbox && !remote)
    throw new UsageError(
      '--sandbox only applies with --remote (validate against the built-in sandbox).',
      'sandbox_without_remote',
    );
  const { supplier, config, contract, openPeriodStart, forceAddToCurrentStatement, ...service } = rest;
  const dialect = chooseDialect({ flags: service, env, file });
  checkContractDialect(file, dialect);
  return Object.freeze({
    dir,
    json: json === true,
    errorsCsv,
    allowNoAccounts: allowNoAccounts === true,
    show: show === undefined ? undefined : showKeysOf(show),
    dialect,
    mapping: { ...withOpenPeriod(file, { dir, openPeriodStart, forceAddToCurrentStatement }), dialect },
    remote: remote ? { sandbox: sandbox === true, concurrency, flags: service } : undefined,
  });
}
