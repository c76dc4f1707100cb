import { resolve } from 'node:path';
import type { ServiceIdentity } from '../../config/ledger-service.js';
import { ledgerUrlOf } from '../../config/ledger-url.js';
import { chooseDialect, type ServiceFlags } from '../../config/service.js';
import type { Dialect } from '../../schema/index.js';
import { UsageError } from '../../errors.js';
import type { StatusFlags } from './flags.js';

// `migrate status`'s one configuration, resolved once from what commander parsed (after the run configuration), the
// environment and what the ledger recorded; pure. After it nothing reads a flag.

/** Where the ledger is: a state directory, or a PostgreSQL ledger read through a snapshot. */
export interface StatusLedgerPlace {
  readonly stateDir: string;
  /** The PostgreSQL ledger's URL (--ledger, else MIGRATE_LEDGER_URL), or undefined for the state directory's. */
  readonly url: string | undefined;
  /** --offline (the ledger is all there is to read) or --state given: the ledger must exist. */
  readonly required: boolean;
}

/** What the opened ledger recorded: the supplier codes it holds and the service it was pushed to. */
export interface RecordedLedger {
  /** How messages name the ledger: the state directory, or the PostgreSQL URL without its password. */
  readonly label: string;
  readonly suppliers: readonly string[];
  readonly dialect: string | undefined;
  readonly service: ServiceIdentity | undefined;
}

export interface StatusConfig {
  readonly supplier: string;
  readonly ledgerLabel: string | undefined;
  /** One account's whole story instead of the summary. */
  readonly account: string | undefined;
  readonly json: boolean;
  readonly maxRows: number;
  readonly maxStatusChecks: number;
  /** undefined: --offline. `flags.dialect`: the dialect chosen; `recorded`: the service of the ledger. */
  readonly service:
    { readonly flags: ServiceFlags & { dialect: Dialect }; readonly recorded: ServiceIdentity | undefined } | undefined;
}

export interface StatusConfigInput {
  supplier: string;
  flags: StatusFlags;
  env: NodeJS.ProcessEnv;
  /** undefined: no ledger was opened (none in the state directory). */
  recorded: RecordedLedger | undefined;
}

export function statusLedgerPlace(flags: StatusFlags, env: NodeJS.ProcessEnv): StatusLedgerPlace {
  const required = flags.offline === true || flags.stateGiven === true;
  return { stateDir: resolve(flags.state), url: ledgerUrlOf(flags.ledger, env), required };
}

export function resolveStatusConfig({ supplier, flags, env, recorded }: StatusConfigInput): StatusConfig {
  const { state, ledger, offline, account, json, maxRows, maxStatusChecks, runConfig, stateGiven, ...service } = flags;
  if (recorded !== undefined && account === undefined) refuseSupplierNotHeld(supplier, recorded);
  const ledgerDialect = recorded?.dialect;
  const dialect =
    offline === true
      ? undefined
      : chooseDialect({
          flags: service,
          env,
          recorded: ledgerDialect === undefined ? undefined : { dialect: ledgerDialect, ledgerLabel: recorded!.label },
        });
  return Object.freeze({
    supplier,
    ledgerLabel: recorded?.label,
    account,
    json: json === true,
    maxRows,
    maxStatusChecks,
    service: dialect === undefined ? undefined : { flags: { ...service, dialect }, recorded: recorded?.service },
  });
}

/**
 * A supplier code the ledger holds no account of is a mistake (a typo, the wrong --state): exit 2 naming the codes it
 * holds, so that `status || mail` under cron fires instead of reporting "nothing to do".
 */
function refuseSupplierNotHeld(supplier: string, recorded: RecordedLedger): void {
  const held = recorded.suppliers;
  if (held.includes(supplier)) return;
  throw new UsageError(
    held.length === 0
      ? `the ledger in ${recorded.label} holds no accounts yet (of any import supplier): run migrate push first, or ` +
          `give the --state directory of the migration`
      : `the ledger in ${recorded.label} holds no accounts of import supplier ${JSON.stringify(supplier)}; it ` +
          `holds ${held.map((code) => JSON.stringify(code)).join(', ')} (codes are case-sensitive). Give one of ` +
          `them, or the --state directory of ${supplier}'s migration.`,
    'supplier_not_in_ledger',
  );
}
