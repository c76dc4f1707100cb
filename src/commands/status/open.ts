import { refuseOtherService, serviceIdentity } from '../../config/ledger-service.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import { checkStateDir, LEDGER_FILE } from '../../ledger/index.js';
import { ledgerExists, openLedgerSource, type LedgerSource } from '../common/ledger-source.js';
import { openService, type OpenService } from '../common/open-service.js';
import type { RecordedLedger, StatusConfig, StatusLedgerPlace } from './resolve.js';

// What `migrate status` opens: the ledger (read-only; without one, the service's view alone) and the service in the
// dialect resolve.ts chose, refused when it is not the one the ledger was pushed to.

export function openStatusLedger(place: StatusLedgerPlace): LedgerSource | undefined {
  checkStateDir(place.stateDir, 'read', LEDGER_FILE);
  if (place.required || ledgerExists(place.stateDir)) return openLedgerSource(place.stateDir);
  process.stderr.write(
    `migrate: no ledger in ${place.stateDir}: showing the service's view only (give --state DIR for the ledger's)\n`,
  );
  return undefined;
}

export function recordedOf(ledger: LedgerSource, label: string): RecordedLedger {
  return { label, suppliers: ledger.read.suppliers(), dialect: ledger.read.dialect(), service: ledger.read.service() };
}

/** The service, unless --offline; against another service than the ledger's, refused (exit 2) as push does. */
export async function openStatusService(config: StatusConfig): Promise<OpenService | undefined> {
  if (config.service === undefined) return undefined;
  const service = await openService({
    flags: config.service.flags,
    dialect: config.service.flags.dialect,
    client: { concurrency: RUN_DEFAULTS.concurrency },
    withoutUrl: 'or --offline for the ledger alone',
  });
  const recorded = config.service.recorded;
  if (recorded === undefined) return service;
  const { baseUrl, dialect } = service.config;
  const current = serviceIdentity({ sandbox: false, baseUrl, dialect, importSupplier: undefined });
  try {
    refuseOtherService({ ledgerLabel: config.ledgerLabel ?? '', recorded, current, command: 'status' });
  } catch (error) {
    await service.close();
    throw error;
  }
  return service;
}
