import { isLoopbackHost } from '../../api/proxy.js';
import { SETTING_ENV } from '../../config/precedence.js';
import { UsageError } from '../../errors.js';
import { DEFAULT_API_KEY } from '../../sandbox/index.js';

// Who can reach the sandbox (docs/sandbox.md "Beyond this machine"). Its inspection endpoint hands every payload it
// was sent (names, dates of birth, addresses, bank details: a rehearsal may use the real export) to whoever holds its
// key, and its default key is published. On a loopback address only this machine reaches it; on any other
// address it starts only with a key of the operator's own and with --public, which says that this is meant.

export interface SandboxReach {
  host: string;
  /** The key given (--api-key-file, MIGRATE_API_KEY, --api-key): undefined is the published default. */
  apiKey: string | undefined;
  /** --public: reachable from other machines, on purpose. */
  public: boolean;
}

/** Who reaches a sandbox listening on `host` (not a loopback address). */
function whoReaches(host: string): string {
  const everyInterface = ['0.0.0.0', '::', '[::]', ''].includes(host.trim());
  return everyInterface
    ? 'every machine that can reach this one (it listens on every interface)'
    : `every machine that can reach ${host}`;
}

const INSPECTOR = 'its inspection endpoint (GET /_sandbox/accounts/SUPPLIER/)';

/**
 * Refuses (exit 2) a sandbox on a non-loopback `--host` with the published key or without --public; returns what
 * the sandbox says when it starts beyond this machine (undefined on a loopback address).
 */
export function checkSandboxReach(reach: SandboxReach): string | undefined {
  if (isLoopbackHost(reach.host)) return undefined;
  const who = whoReaches(reach.host);
  if (reach.apiKey === undefined || reach.apiKey === DEFAULT_API_KEY)
    throw new UsageError(
      `sandbox --host ${reach.host}: ${who} would reach the sandbox, and its key is the published default ` +
        `(${DEFAULT_API_KEY}), with which anyone reads through ${INSPECTOR} every payload sent to it. Give a key of ` +
        `your own (--api-key-file FILE, or set ${SETTING_ENV.apiKey}) and add --public, or leave --host at 127.0.0.1.`,
      'sandbox_public_default_key',
    );
  if (!reach.public)
    throw new UsageError(
      `sandbox --host ${reach.host}: ${who} would reach the sandbox, and whoever holds its key reads through ` +
        `${INSPECTOR} every payload sent to it: names, dates of birth, addresses, bank details. Add --public if ` +
        'that is meant, or leave --host at 127.0.0.1.',
      'sandbox_public_not_asked',
    );
  return (
    `Public (--public): ${who}; whoever holds the key reads through ${INSPECTOR} every payload sent to it ` +
    '(names, dates of birth, addresses, bank details).'
  );
}
