import { ExitCode, UsageError } from '../../errors.js';
import { existingLedgerDir, onLockedLedger, stopPoint } from './locked-ledger.js';

export interface LedgerForgetOptions {
  state: string;
  supplier?: string;
  dryRun?: boolean;
}

/** How many account numbers the command prints in full; the rest are counted. */
const LISTED = 50;

/**
 * `migrate ledger forget --supplier CODE`: removes from the ledger the accounts staged under CODE that never reached
 * the service (a mistyped supplier code), printing which; the next push stages the export as it reads now.
 */
export async function ledgerForgetCommand(options: LedgerForgetOptions, signal?: AbortSignal): Promise<number> {
  const supplier = options.supplier;
  if (supplier === undefined || supplier === '')
    throw new UsageError('migrate ledger forget: give the supplier code whose accounts to remove: --supplier CODE');
  const stateDir = existingLedgerDir(options.state);
  return onLockedLedger(stateDir, async (ledger) => {
    // The removal is one synchronous transaction: a stop signal that came before it is seen here.
    await stopPoint(signal);
    const dryRun = options.dryRun === true;
    const { numbers, kept } = ledger.forgetSupplier(supplier, dryRun);
    const lines = [
      `${dryRun ? 'would remove' : 'removed'} ${numbers.length} account(s) of import supplier ${supplier} that ` +
        `never reached the service, from ${stateDir}${numbers.length > 0 ? ':' : ''}`,
      ...numbers.slice(0, LISTED).map((number) => `  ${number}`),
      ...(numbers.length > LISTED ? [`  ... and ${numbers.length - LISTED} more`] : []),
    ];
    if (kept > 0)
      lines.push(
        `kept ${kept} account(s) of ${supplier} that reached the service (or may have): the ledger must remember ` +
          'what was sent',
      );
    if (!dryRun && numbers.length > 0)
      lines.push('The next push stages the export as it reads now (the corrected --supplier, mapping or data).');
    if (dryRun) lines.push('Nothing was changed (--dry-run).');
    process.stdout.write(`${lines.join('\n')}\n`);
    return ExitCode.ok;
  });
}
