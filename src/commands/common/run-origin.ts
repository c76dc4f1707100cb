import type { Command } from 'commander';
import { nonEmpty, SETTING_ENV } from '../../config/precedence.js';
import { limitDetail, visibleValue } from '../../errors.js';
import { writeStampedLine } from '../../output/stamped-output.js';
import { shownUrl } from '../../shown-url.js';

// Where a run's customers and key go, said before anything else (docs/operators-guide.md "One file per cohort"): the
// run configuration read (or none) and the service the command talks to, with where its URL was set. A planted
// `migrate.run.json` that names another host is then seen on the first line of every run, in cron mail and in a log
// file, not found afterwards. The first line on stderr, stamped; `--json` documents and push's NDJSON log carry the
// same two facts (`run_config`, `service_url`).

/** How a command reaches the service: the configured one, the built-in sandbox it starts, or none at all. */
export type ServiceUse = 'service' | 'sandbox' | 'none';

/** The run configuration and the service a command uses, as it starts. */
export interface RunOrigin {
  /** The run configuration read (absolute path), or null: none. */
  readonly runConfig: string | null;
  /** How the run configuration was found: --run-config, MIGRATE_RUN_CONFIG, or the working directory. */
  readonly runConfigBy: string;
  readonly use: ServiceUse;
  /** The service's base URL as set (null: none set, or the sandbox's, known once it listens). */
  readonly serviceUrl: string | null;
  /** Where the URL was set: --base-url, MIGRATE_BASE_URL or base_url in the run configuration. */
  readonly serviceUrlFrom: string | undefined;
}

/** What commander knows of a command's base URL: the flag, else the environment, else the run configuration. */
export function runOriginOf(
  command: Command,
  found: { file: string | undefined; by: string },
  use: ServiceUse,
  env: NodeJS.ProcessEnv,
): RunOrigin {
  const given: unknown = command.getOptionValue('baseUrl');
  const option = typeof given === 'string' ? nonEmpty(given) : undefined;
  const source = command.getOptionValueSource('baseUrl');
  // The flag wins over the environment, which wins over the file (config/precedence.ts), as the service's settings
  // take them.
  const [serviceUrl, serviceUrlFrom] = [
    [source === 'cli' ? option : undefined, '--base-url'],
    [nonEmpty(env[SETTING_ENV.baseUrl]), SETTING_ENV.baseUrl],
    [source === 'config' ? option : undefined, 'base_url in the run configuration'],
  ].find(([url]) => url !== undefined) ?? [undefined, undefined];
  return {
    runConfig: found.file ?? null,
    runConfigBy: found.by,
    use,
    serviceUrl: use === 'service' ? (serviceUrl ?? null) : null,
    serviceUrlFrom: use === 'service' ? serviceUrlFrom : undefined,
  };
}

/** A path as a line shows it: no control character or line break, bounded. */
const shown = (text: string): string => visibleValue(limitDetail(text, 500));

/** The line: `migrate: run configuration FILE (how found); service URL (where set)`. */
export function runOriginLine(origin: RunOrigin): string {
  const config =
    origin.runConfig === null
      ? `run configuration none (${origin.runConfigBy})`
      : `run configuration ${shown(origin.runConfig)} (${origin.runConfigBy})`;
  const service =
    origin.use === 'none'
      ? 'no service contacted'
      : origin.use === 'sandbox'
        ? 'service: the built-in sandbox (--sandbox), on this machine with a key of its own'
        : origin.serviceUrl === null
          ? 'service URL not set'
          : `service ${shownUrl(origin.serviceUrl)} (${origin.serviceUrlFrom ?? 'default'})`;
  return `migrate: ${config}; ${service}`;
}

/** Says the run's origin first on stderr, stamped. */
export function sayRunOrigin(origin: RunOrigin, env: NodeJS.ProcessEnv): void {
  writeStampedLine(process.stderr, runOriginLine(origin), env);
}

/** The two facts in a JSON document: the run configuration read and the URL the command talked to (null: none). */
export function runOriginJson(
  origin: RunOrigin | undefined,
  serviceUrl: string | undefined,
): { run_config: string | null; service_url: string | null } {
  return { run_config: origin?.runConfig ?? null, service_url: serviceUrl === undefined ? null : shownUrl(serviceUrl) };
}
