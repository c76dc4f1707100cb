import { apiKeyOf } from '../../config/service.js';
import { SETTING_ENV } from '../../config/precedence.js';
import { UsageError } from '../../errors.js';

// The sandbox's own key, taken as push takes the organisation's (docs/api-client.md): --api-key-file FILE, else
// MIGRATE_API_KEY, so that a rehearsal's push and sandbox share one setting. --api-key KEY still works, with a
// warning: every user of the machine reads a process's arguments (ps, /proc) for as long as the sandbox runs.

/** The key the sandbox accepts; undefined: the published default. `given` says where it came from. */
export interface SandboxKey {
  readonly apiKey: string | undefined;
  readonly given: string | undefined;
}

export const API_KEY_IN_ARGV_WARNING =
  'migrate: warning: --api-key: the key is visible to every user of this machine (ps, /proc) while the sandbox ' +
  `runs; give it in ${SETTING_ENV.apiKey} or in a file named by --api-key-file FILE instead\n`;

export async function sandboxKeyOf(
  flags: { apiKey?: string | undefined; apiKeyFile?: string | undefined },
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<SandboxKey> {
  if (flags.apiKey !== undefined && flags.apiKeyFile !== undefined)
    throw new UsageError(
      'sandbox: --api-key and --api-key-file both name a key; give one (--api-key-file keeps it out of the process ' +
        'list)',
      'sandbox_two_keys',
    );
  if (flags.apiKey !== undefined) {
    process.stderr.write(API_KEY_IN_ARGV_WARNING);
    return { apiKey: flags.apiKey, given: '--api-key' };
  }
  const key = await apiKeyOf(flags.apiKeyFile, env, cwd);
  return { apiKey: key?.apiKey, given: key?.source };
}
