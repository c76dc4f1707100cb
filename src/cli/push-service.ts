import type { ClientEvent } from '../api/index.js';
import {
  describeService,
  MOVE_FLAG,
  refuseOtherService,
  serviceDifferences,
  serviceIdentity,
  type ServiceIdentity,
} from '../config/ledger-service.js';
import { chooseDialect } from '../config/service.js';
import type { Ledger } from '../ledger/index.js';
import { DEFAULT_SUPPLIERS } from '../sandbox/index.js';
import { openService, type OpenService } from './open-service.js';
import type { RunLedger } from './push-ledger.js';
import type { PushCommandOptions } from './push-options.js';
import type { PushSetup } from './push-setup.js';

// The service a push run talks to, and the one its ledger belongs to: a ledger records the service it was pushed to,
// and a run against another is refused unless --move-ledger-to-service moves it (docs/commands.md, push).

/** This run's service, refused (exit 2) when the ledger records another and --move-ledger-to-service is not given. */
export function checkLedgerService(
  options: PushCommandOptions,
  setup: PushSetup,
  { ledger, label }: RunLedger,
): { recorded: ServiceIdentity | undefined; current: ServiceIdentity; dialect: RecordedDialect | undefined } {
  const moving = options.moveLedgerToService === true;
  // Read under the lock: the dialect the setup chose must be the ledger's (a PostgreSQL ledger's is known only now).
  const recordedDialect = ledger.read.dialect();
  const dialect = recordedDialect === undefined ? undefined : { dialect: recordedDialect, ledgerLabel: label, moving };
  const current = serviceIdentity({
    sandbox: options.sandbox === true,
    baseUrl: setup.service?.baseUrl,
    dialect: chooseDialect({ flags: options, env: process.env, file: setup.config, recorded: dialect }),
    importSupplier: setup.config.importSupplier,
  });
  const recorded = ledger.read.service();
  if (recorded !== undefined && !moving) refuseOtherService({ ledgerLabel: label, recorded, current, command: 'push' });
  return { recorded, current, dialect };
}

export type RecordedDialect = NonNullable<PushSetup['recorded']>;

/** Records the run's service when the ledger has none yet, or when --move-ledger-to-service moved it. */
export function recordService(
  ledger: Ledger,
  recorded: ServiceIdentity | undefined,
  current: ServiceIdentity,
  runId: number,
): void {
  if (recorded === undefined) ledger.recordService(current);
  else if (serviceDifferences(recorded, current).length > 0) ledger.recordService(current, { from: recorded, runId });
}

/** What --move-ledger-to-service will do, when the ledger records another service than this run's. */
export function moveText(
  stateDir: string,
  recorded: ServiceIdentity | undefined,
  current: ServiceIdentity,
): string | undefined {
  if (recorded === undefined || serviceDifferences(recorded, current).length === 0) return undefined;
  return (
    `${MOVE_FLAG}: the ledger of ${stateDir} moves from ${describeService(recorded)} to ` +
    `${describeService(current)} once this run is answered`
  );
}

/** The service of open-service.ts; --sandbox: processing fast, no faults, the configured supplier Ongoing. */
export function openPushService(
  options: PushCommandOptions,
  setup: PushSetup,
  recorded: RecordedDialect | undefined,
  client: { signal: AbortSignal; onEvent?: (event: ClientEvent) => void },
): Promise<OpenService> {
  const supplier = setup.config.importSupplier;
  // The default suppliers stay: records may carry their own import_supplier (the configured one fills only gaps).
  const sandbox = options.sandbox
    ? {
        processingMs: 50,
        ...(supplier === undefined ? {} : { suppliers: { ...DEFAULT_SUPPLIERS, [supplier]: 'Ongoing' as const } }),
      }
    : undefined;
  return openService({
    flags: options,
    sandbox,
    file: setup.config,
    recorded,
    // Loaded once before the ledger was opened; again only when the ledger's own dialect turned out to differ (a
    // PostgreSQL ledger's is read once it is open).
    config: setup.service?.dialect === (recorded?.dialect ?? setup.dialect) ? setup.service : undefined,
    client: {
      concurrency: options.concurrency,
      maxRequestsPerSecond: options.rate,
      timeouts: { firstAnswerMs: options.firstAnswerTimeout * 1000 },
      ...client,
    },
  });
}
