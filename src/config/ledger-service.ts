import { UsageError } from '../errors.js';

// The service a state directory is used with (docs/reruns.md): its ledger says what one
// service holds, so a push or status against another would skip what that one never received (a
// sandbox rehearsal's ledger says "done" for accounts the real platform has never seen). The first
// push records it; later runs must name the same one, or move the ledger on deliberately with
// --move-ledger-to-service (a new URL for the same platform after a DNS change). Pure: the command
// files read and write the ledger.

/** How the built-in sandbox of `--sandbox` is recorded: it gets a new port each run, and is always the same service. */
export const SANDBOX_SERVICE = 'sandbox:built-in';

export const MOVE_FLAG = '--move-ledger-to-service';

/** A service as a ledger records it. */
export interface ServiceIdentity {
  /** The normalised base URL, or SANDBOX_SERVICE. */
  url: string;
  dialect: string;
  /** The configured import supplier (--supplier, MIGRATE_SUPPLIER, the mapping file), when one is configured. */
  importSupplier?: string | undefined;
}

/**
 * A base URL as it is compared: scheme and host in lower case, the default port dropped, no trailing slash
 * (`https://API.example.org:443/base/` and `https://api.example.org/base` are one service).
 */
export function normaliseServiceUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** The identity of this run's service: the built-in sandbox, or the base URL. */
export function serviceIdentity(input: {
  sandbox: boolean;
  baseUrl: string | undefined;
  dialect: string;
  importSupplier: string | undefined;
}): ServiceIdentity {
  const url = input.sandbox || input.baseUrl === undefined ? SANDBOX_SERVICE : normaliseServiceUrl(input.baseUrl);
  return { url, dialect: input.dialect, ...(input.importSupplier ? { importSupplier: input.importSupplier } : {}) };
}

/** How a service reads in a message. */
export function describeService(service: ServiceIdentity): string {
  const where = service.url === SANDBOX_SERVICE ? 'the built-in sandbox (--sandbox)' : service.url;
  const supplier = service.importSupplier === undefined ? '' : `, import supplier ${service.importSupplier}`;
  return `${where} (${service.dialect} dialect${supplier})`;
}

/** What differs between the recorded service and this run's: empty when it is the same service. */
export function serviceDifferences(recorded: ServiceIdentity, current: ServiceIdentity): string[] {
  const differences: string[] = [];
  if (recorded.url !== current.url) differences.push('URL');
  if (recorded.dialect !== current.dialect) differences.push('dialect');
  // A run without a configured supplier (every record names its own) is not another service.
  if (
    recorded.importSupplier !== undefined &&
    current.importSupplier !== undefined &&
    recorded.importSupplier !== current.importSupplier
  )
    differences.push('import supplier');
  return differences;
}

/**
 * Refuses a run against another service than the state directory's (exit 2), naming both and what to do. `command`:
 * how the message refers to the command (`push` can move the ledger; `status` cannot).
 */
export function refuseOtherService(input: {
  /** The state directory, or the PostgreSQL ledger's URL without its password. */
  ledgerLabel: string;
  recorded: ServiceIdentity;
  current: ServiceIdentity;
  command: 'push' | 'status';
}): void {
  const { ledgerLabel, recorded, current } = input;
  const differences = serviceDifferences(recorded, current);
  if (differences.length === 0) return;
  const same =
    `If it is the same platform under a new ${differences.join(' and ')} ` + '(e.g. a new URL after a DNS change)';
  const move =
    input.command === 'push'
      ? `${same}, run this push again with ${MOVE_FLAG}: the ledger then records the new service.`
      : `${same}, record it first with migrate push ... ${MOVE_FLAG}; or read the ledger alone with --offline.`;
  throw new UsageError(
    `the state directory ${ledgerLabel} was used with ${describeService(recorded)}; this run asks for ` +
      `${describeService(current)}. Its ledger says what that service holds: against another it would skip what ` +
      `the other never received. ${move} For another service, give another --state directory` +
      `${recorded.url === SANDBOX_SERVICE ? ' (this one belongs to the sandbox: throw it away)' : ''}.`,
    'ledger_service_mismatch',
  );
}

/** What --move-ledger-to-service will do, when the ledger records another service than this run's. */
export function moveText(
  ledgerLabel: string,
  recorded: ServiceIdentity | undefined,
  current: ServiceIdentity,
): string | undefined {
  if (recorded === undefined || serviceDifferences(recorded, current).length === 0) return undefined;
  return (
    `${MOVE_FLAG}: the ledger of ${ledgerLabel} moves from ${describeService(recorded)} to ` +
    `${describeService(current)} once this run is answered`
  );
}

/**
 * This run's service against the one its ledger records: refused (exit 2) when they differ and the ledger is not
 * moved (--move-ledger-to-service); else what the ledger records once the service has answered, if anything.
 */
export function checkRunService(input: {
  ledgerLabel: string;
  recorded: ServiceIdentity | undefined;
  current: ServiceIdentity;
  moving: boolean;
}): { service: ServiceIdentity; moved?: { from: ServiceIdentity } } | undefined {
  const { recorded, current } = input;
  if (recorded !== undefined && !input.moving) refuseOtherService({ ...input, recorded, command: 'push' });
  if (recorded === undefined) return { service: current };
  return serviceDifferences(recorded, current).length > 0 ? { service: current, moved: { from: recorded } } : undefined;
}
