import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Counter, Gauge, Registry } from 'prom-client';
import type { ClientEvent } from '../../api/events.js';
import { ACCOUNT_STATES, ITEM_KINDS, ITEM_STATES, type LedgerCounts } from '../../ledger/index.js';
import { refuseForeignTarget, temporaryBeside } from '../../output/output-file.js';
import { errorOf } from '../../errors.js';

// `push --metrics-file FILE`: the cut-over as Prometheus metrics, in the text format node_exporter's
// textfile collector reads (a `.prom` file in its --collector.textfile.directory), so that an
// alert rule can page someone when a run fails or the migration stops moving (docs/monitoring.md).
// prom-client keeps the registry and writes the format; this file decides what is
// measured: the ledger's counts (the whole state directory, all runs), this run's requests, 429s
// and retries (from the client's events), and the runs' start, end, exit code and rate. Written
// whole: to a temporary file in the same directory, then renamed over FILE, so that the collector
// never reads half a file. Counts and codes only: no account number, no secret.

/** A run as the metrics show it; times are Unix milliseconds. */
export interface RunFacts {
  startedAt: number;
  endedAt?: number | undefined;
  exitCode?: number | undefined;
  accountsPerSecond?: number | undefined;
}

export interface PushMetricsOptions {
  file: string;
  /** Labels every series (`state_dir`), so that several cohorts' files on one host do not collide: the state
   * directory, or the PostgreSQL ledger's URL without its password. */
  ledgerLabel: string;
  /** The ledger's counts, read at every write. */
  counts: () => LedgerCounts | Promise<LedgerCounts>;
  /** The last push run that ended before this one (from the ledger's runs), if any. */
  previousRun?: RunFacts | undefined;
  /** This run: when it started, and its rate so far (accounts settled per second). */
  runStartedAt: number;
  rate: () => number;
  now?: () => number;
}

/** `2xx`, `4xx`, `5xx`; `none` when no answer came. */
export function statusClassOf(status: number | undefined): string {
  return status === undefined ? 'none' : `${Math.floor(status / 100)}xx`;
}

const seconds = (ms: number): number => Math.round(ms) / 1000;

export class PushMetrics {
  readonly #options: PushMetricsOptions;
  readonly #now: () => number;
  readonly #registry = new Registry();
  readonly #requests: Counter<'endpoint' | 'status_class'>;
  readonly #rateLimited: Counter<'endpoint'>;
  readonly #retries: Counter<'endpoint'>;
  readonly #gauges: Record<string, Gauge<string>>;
  /** Gauges registered once they have a value, with their names. */
  readonly #unregistered = new Map<Gauge<string>, string>();
  #writing: Promise<void> = Promise.resolve();
  #failure: Error | undefined;
  #end: RunFacts | undefined;

  constructor(options: PushMetricsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const registers = [this.#registry];
    this.#registry.setDefaultLabels({ state_dir: options.ledgerLabel });
    const counter = <L extends string>(name: string, help: string, labelNames: L[]): Counter<L> =>
      new Counter({ name, help, labelNames, registers });
    const gauge = (name: string, help: string, labelNames: string[] = []): Gauge<string> =>
      new Gauge({ name, help, labelNames, registers });
    // Registered once they have a value: an unset gauge would be written as 0 (an exit code 0 never seen).
    const later = (name: string, help: string): Gauge<string> => {
      const made = new Gauge({ name, help, registers: [] });
      this.#unregistered.set(made, name);
      return made;
    };
    this.#requests = counter(
      'migrate_requests_total',
      'HTTP requests this run sent to the import service, per endpoint and answer status class (none: no answer).',
      ['endpoint', 'status_class'],
    );
    this.#rateLimited = counter('migrate_rate_limited_total', 'Answers 429 (rate limited) in this run.', ['endpoint']);
    this.#retries = counter('migrate_retries_total', 'Requests this run sent again after a failed attempt.', [
      'endpoint',
    ]);
    this.#gauges = {
      accounts: gauge('migrate_accounts', 'Accounts in the ledger per state (every run so far).', ['state']),
      records: gauge('migrate_records', 'Post-import records in the ledger per kind and state.', ['kind', 'state']),
      inProgress: gauge('migrate_run_in_progress', '1 while a push runs, 0 once it ended.'),
      runStart: gauge('migrate_run_start_time_seconds', 'When the current (or last) push run started, Unix time.'),
      runRate: gauge('migrate_run_accounts_per_second', 'Accounts the current (or last) run settled per second.'),
      lastStart: later('migrate_last_run_start_time_seconds', 'When the last push run that ended started.'),
      lastEnd: later('migrate_last_run_end_time_seconds', 'When the last push run that ended ended, Unix time.'),
      lastExit: later('migrate_last_run_exit_code', 'Exit code of the last push run that ended (README "Exit codes").'),
      lastRate: later(
        'migrate_last_run_accounts_per_second',
        'Accounts the last push run that ended settled per second.',
      ),
    };
  }

  /** The first write failure (disk full, directory removed): writing stopped, the run went on. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** The client's events: requests by endpoint and status class, 429s, retries. */
  onClientEvent(event: ClientEvent): void {
    if (event.type === 'response')
      this.#requests.inc({ endpoint: event.endpoint, status_class: statusClassOf(event.status) });
    if (event.type === 'rate_limited') this.#rateLimited.inc({ endpoint: event.endpoint });
    if (event.type === 'retry') this.#retries.inc({ endpoint: event.endpoint });
  }

  /** Writes the file now (the run goes on); with `end`, the run's last write: it has ended with that exit code. */
  write(end?: { exitCode: number }): Promise<void> {
    if (end !== undefined)
      this.#end = {
        startedAt: this.#options.runStartedAt,
        endedAt: this.#now(),
        exitCode: end.exitCode,
        accountsPerSecond: this.#options.rate(),
      };
    this.#writing = this.#writing.then(() => this.#writeNow());
    return this.#writing;
  }

  async #writeNow(): Promise<void> {
    if (this.#failure !== undefined) return;
    try {
      this.#setGauges(await this.#options.counts());
      writeWhole(this.#options.file, await this.#registry.metrics());
    } catch (error) {
      this.#failure = errorOf(error);
    }
  }

  #setGauges(counts: LedgerCounts): void {
    const g = this.#gauges;
    for (const state of ACCOUNT_STATES) g['accounts']?.set({ state }, counts.accounts[state] ?? 0);
    for (const kind of ITEM_KINDS)
      for (const state of ITEM_STATES) g['records']?.set({ kind, state }, counts.items[kind]?.[state] ?? 0);
    g['inProgress']?.set(this.#end === undefined ? 1 : 0);
    g['runStart']?.set(seconds(this.#options.runStartedAt));
    g['runRate']?.set(this.#end?.accountsPerSecond ?? this.#options.rate());
    const last = this.#end ?? this.#options.previousRun;
    if (last === undefined) return;
    this.#setLater('lastStart', seconds(last.startedAt));
    if (last.endedAt !== undefined) this.#setLater('lastEnd', seconds(last.endedAt));
    if (last.exitCode !== undefined) this.#setLater('lastExit', last.exitCode);
    if (last.accountsPerSecond !== undefined) this.#setLater('lastRate', last.accountsPerSecond);
  }

  #setLater(key: string, value: number): void {
    const gauge = this.#gauges[key];
    if (gauge === undefined) return;
    if (this.#unregistered.delete(gauge)) this.#registry.registerMetric(gauge);
    gauge.set(value);
  }
}

/**
 * To a temporary beside FILE nobody can predict (output-file.ts; not ending in .prom: never collected), then renamed
 * over FILE, which must be this user's regular file when it exists; 0644 so the collector may read it.
 */
function writeWhole(file: string, text: string): void {
  const temporary = temporaryBeside(file);
  try {
    writeFileSync(temporary, text, { flag: 'wx', mode: 0o644 });
    // Whatever the umask (the tool's is 077): the collector is another user.
    chmodSync(temporary, 0o644);
    refuseForeignTarget('--metrics-file', file);
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}
