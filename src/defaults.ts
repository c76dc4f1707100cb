// The defaults of a run, in one table: the commands' flags (docs/commands.md), the engine's settings and the
// client's options read them here, so that a default is changed in one place and the help text, the engine and the
// client cannot disagree. Like errors.ts, a leaf every folder may import.

export interface RunDefaults {
  /** --state: the state directory holding the results ledger. */
  stateDir: string;
  /** report --out. */
  reportDir: string;
  /** Requests in flight at most: push --concurrency, status's requests, the client's connection pool. */
  concurrency: number;
  /** validate --remote --concurrency: requests to the validate endpoint in flight at most. */
  remoteValidateConcurrency: number;
  /** push --wait-timeout: stop waiting when no account progressed for this long. */
  waitTimeoutSeconds: number;
  /** After SIGINT/SIGTERM, how long requests in flight may take before the run ends. */
  drainSeconds: number;
  /** Transient failures in a row (after the client's retries) after which the service counts as unreachable. */
  maxConsecutiveFailures: number;
  /** push --progress-interval: seconds between progress lines when stderr is not a terminal. */
  progressIntervalSeconds: number;
  /** push --metrics-interval: seconds between writes of --metrics-file. */
  metricsIntervalSeconds: number;
  /**
   * push --lost-create-checks: status checks after a create answered 201 that find no import process (v2 404) before
   * the create counts as lost and is sent again (docs/limits.md "Limits on what the service answers", a create
   * answered 201 whose import process never shows).
   */
  lostCreateChecks: number;
  /**
   * push --batch-bytes: most bytes of records in one post-import request (notes, transactions, statements), so that a
   * proxy's body limit (nginx: 1 MiB by default) is not met; a 413 still splits the request (docs/limits.md).
   */
  batchBytes: number;
  /**
   * push --first-answer-timeout: until the service has answered a request of the run, a request with no whole answer
   * within this long stops the run (a service that never answers, docs/api-client.md "Time-outs").
   */
  firstAnswerSeconds: number;
  /**
   * --shape-memory by default: this share of the memory the process may use (its cgroup's limit, else the machine's),
   * within these bounds in bytes; past it the engine's sorts, joins and aggregates spill to its temporary directory.
   */
  shapeMemory: { share: number; least: number; most: number };
  /** --shape-temp-limit by default: this share of the space free in the temporary directory (TMPDIR). */
  shapeTempDisk: { share: number };
}

export const RUN_DEFAULTS = {
  stateDir: './.migrate',
  reportDir: './migrate-report',
  concurrency: 8,
  remoteValidateConcurrency: 4,
  waitTimeoutSeconds: 600,
  drainSeconds: 10,
  maxConsecutiveFailures: 25,
  progressIntervalSeconds: 60,
  metricsIntervalSeconds: 30,
  lostCreateChecks: 8,
  batchBytes: 512 * 1024,
  firstAnswerSeconds: 50,
  shapeMemory: { share: 0.25, least: 128e6, most: 1e9 },
  shapeTempDisk: { share: 0.5 },
} as const satisfies RunDefaults;
