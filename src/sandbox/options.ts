import { isDialect, type Contract, type Dialect } from '../schema/index.js';

// Options of the sandbox: optional outside (startSandbox(Partial<SandboxOptions>)), complete
// inside (resolveSandboxOptions), validated once with messages that give expected and actual.

export const SUPPLIER_STATUSES = ['Ongoing', 'Paused', 'Complete'] as const;
export type SupplierStatus = (typeof SUPPLIER_STATUSES)[number];

/** Injected failures (docs/sandbox.md). Shares are probabilities per REST request. */
export interface FaultOptions {
  /** Added to every response, in milliseconds. */
  latencyMs: number;
  /** A uniform random 0..jitterMs added on top of latencyMs. */
  jitterMs: number;
  /** Share of requests answered 500 before anything is applied. */
  failRate: number;
  /** Share of requests answered 429 with Retry-After before anything is applied. */
  rateLimitRate: number;
  /** Retry-After (seconds) of the injected 429s. */
  retryAfterSeconds: number;
  /** Share of requests whose connection is destroyed before the change is applied. */
  dropRate: number;
  /** Share of requests whose change is applied, then the connection destroyed without a response. */
  ambiguousRate: number;
  /** Share of requests answered 200 with an HTML login page before anything is applied (an SSO proxy in front). */
  htmlRate: number;
  /** A real rate limit: more requests than this in a second get 429 + Retry-After (0 = none). */
  maxRps: number;
  /** Apply the random faults to the token mutation too (default: REST endpoints only). */
  faultTokenIssue: boolean;
  /**
   * Share of accounts (fixed by the seed and the pair) whose create is answered 201 and then lost: no import process
   * is scheduled, as when a proxy or a queue loses it (0 = none, 1 = every account).
   */
  lostCreateShare: number;
  /** Only the first create of each such account is lost; a create sent again is scheduled. */
  lostCreateOnce: boolean;
  /** Answers to GET requests (status and lists) are sent one byte every N ms, a trickle (0 = off). */
  trickleMs: number;
  /** Every error's `detail` (error answers, and a status's latest_error) is padded to N characters (0 = off). */
  errorDetailChars: number;
  /**
   * Every error (error answers, a status's latest_error, the token mutation's errors) echoes the credentials: the
   * Authorization header, the request body, and the API key in the encodings a service may use (redaction tests).
   */
  echoCredentials: boolean;
}

export interface SandboxOptions extends FaultOptions {
  /** `spec` (default): the spec's names and shapes; `kraken`: the real platform's (docs/real-platform.md). */
  dialect: Dialect;
  /**
   * A tenant's contract (kraken dialect only): every request body is also judged by the tenant's document, which
   * says which fields exist (docs/sandbox.md "Rehearsing a tenant"). Undefined: the spec's fields only.
   */
  contract: Contract | undefined;
  host: string;
  /** 0 = any free port. */
  port: number;
  /** The organisation API key the token mutation accepts. */
  apiKey: string;
  /** Import suppliers by code and their status. */
  suppliers: Record<string, SupplierStatus>;
  /** Time from create to PROCESSED/ERRORED; IN_PROGRESS from half of it. 0 = settled at once. */
  processingMs: number;
  /** Added to each process's processing time: a share of 0..N ms fixed by the seed and the pair (default 0). */
  processingSpreadMs: number;
  /** Share of created accounts that end ERRORED (besides external account numbers starting ERR-). */
  erroredShare: number;
  /** First day (YYYY-MM-DD) of the open statement period; default the first of the current UTC month. */
  openPeriodStart: string;
  /** Today (YYYY-MM-DD) for "not in the future" rules; default the UTC date at each request. */
  today: string | undefined;
  /** Lifetime of an access token, seconds (the real platform: 60 minutes). */
  tokenTtlSeconds: number;
  /** Lifetime of a refresh token, seconds (the real platform: 7 days). */
  refreshTtlSeconds: number;
  /** Seed of every random choice (faults, account numbers, errored share). */
  seed: number;
  /** Keep the full create payload of each account for the inspector (false for large benchmarks). */
  retainPayloads: boolean;
  /** Record each request in the inspector's log (false for large benchmarks). */
  recordRequests: boolean;
  /** How many `FLAKY-` payment instruction attempts get a 500 before one succeeds. */
  flakyAttempts: number;
  /**
   * Accept several payment instructions per account. Default false: the real platform's one active
   * instruction per account, a second refused with 400 "Account already has an active instruction".
   */
  multiplePaymentInstructions: boolean;
  /**
   * How long a `LOST-` payment instruction (created, then no answer) holds its connection before it is destroyed, ms.
   */
  lostAnswerMs: number;
  /** Request bodies above this many bytes get 413. */
  maxBodyBytes: number;
  /**
   * The v1 transfer status word of an account that exists, given with its platform account number: `COMPLETED` (the
   * spec), or a tenant's word for the industry switch that follows (Octopus Energy France, Plenitude France:
   * `PENDING`, `IN_PROGRESS`, `REJECTED`). Any upper-case word (docs/sandbox.md "Answering as a tenant does").
   */
  transferStatusWord: string;
  /**
   * A word the spec does not give (e.g. `QUEUED_FOR_REVIEW`) answered for a process still running, by v2 status
   * (instead of PENDING and IN_PROGRESS) and by v1 transfer status (instead of IN_PROGRESS, the number empty);
   * undefined: the spec's words.
   */
  processingStatusWord: string | undefined;
  /** The first N token mutation requests are refused as too many requests (0 = none). */
  throttleTokenRequests: number;
  /** Token mutation requests within this many ms of the sandbox's start (its clock) are refused alike (0 = none). */
  throttleTokenMs: number;
  /**
   * How a refused token request is answered: 200 with the GraphQL error `KT-CT-1199` (the real platform), or its HTTP
   * forms, 429 or 503 with `Retry-After` (retryAfterSeconds).
   */
  throttleTokenStatus: 200 | 429 | 503;
  /** One line per request (method, path, status, ms); never headers, keys or tokens. */
  log: ((line: string) => void) | undefined;
}

export const DEFAULT_SUPPLIERS: Record<string, SupplierStatus> = {
  ACME: 'Ongoing',
  PAUSED: 'Paused',
  COMPLETE: 'Complete',
};

export const DEFAULT_API_KEY = 'sandbox-api-key';

function firstOfCurrentMonth(): string {
  return `${new Date().toISOString().slice(0, 7)}-01`;
}

export function defaultSandboxOptions(): SandboxOptions {
  return {
    dialect: 'spec',
    contract: undefined,
    host: '127.0.0.1',
    port: 0,
    apiKey: DEFAULT_API_KEY,
    suppliers: { ...DEFAULT_SUPPLIERS },
    processingMs: 200,
    processingSpreadMs: 0,
    erroredShare: 0,
    openPeriodStart: firstOfCurrentMonth(),
    today: undefined,
    tokenTtlSeconds: 3600,
    refreshTtlSeconds: 7 * 24 * 3600,
    seed: 1,
    retainPayloads: true,
    recordRequests: true,
    flakyAttempts: 1,
    multiplePaymentInstructions: false,
    lostAnswerMs: 0,
    maxBodyBytes: 5 * 1024 * 1024,
    transferStatusWord: 'COMPLETED',
    processingStatusWord: undefined,
    throttleTokenRequests: 0,
    throttleTokenMs: 0,
    throttleTokenStatus: 200,
    log: undefined,
    latencyMs: 0,
    jitterMs: 0,
    failRate: 0,
    rateLimitRate: 0,
    retryAfterSeconds: 1,
    dropRate: 0,
    ambiguousRate: 0,
    htmlRate: 0,
    maxRps: 0,
    faultTokenIssue: false,
    lostCreateShare: 0,
    lostCreateOnce: false,
    trickleMs: 0,
    errorDetailChars: 0,
    echoCredentials: false,
  };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function check(ok: boolean, name: string, expected: string, actual: unknown): void {
  if (!ok) throw new RangeError(`sandbox option ${name}: expected ${expected}, got ${JSON.stringify(actual)}`);
}

/** Merges defaults and validates; throws a RangeError naming the option, what it expects and what it got. */
export function resolveSandboxOptions(partial: Partial<SandboxOptions> = {}): SandboxOptions {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined));
  const options = { ...defaultSandboxOptions(), ...defined };
  if (defined['openPeriodStart'] === undefined && typeof options.today === 'string')
    options.openPeriodStart = `${options.today.slice(0, 7)}-01`;
  const nonNegative = (name: keyof SandboxOptions) =>
    check(Number.isFinite(options[name]) && (options[name] as number) >= 0, name, 'a number >= 0', options[name]);
  const share = (name: keyof SandboxOptions) =>
    check(
      Number.isFinite(options[name]) && (options[name] as number) >= 0 && (options[name] as number) <= 1,
      name,
      'a share between 0 and 1',
      options[name],
    );
  (
    [
      'latencyMs',
      'jitterMs',
      'retryAfterSeconds',
      'maxRps',
      'processingMs',
      'processingSpreadMs',
      'flakyAttempts',
      'lostAnswerMs',
      'trickleMs',
      'errorDetailChars',
      'throttleTokenRequests',
      'throttleTokenMs',
    ] as const
  ).forEach(nonNegative);
  (
    ['failRate', 'rateLimitRate', 'dropRate', 'ambiguousRate', 'htmlRate', 'erroredShare', 'lostCreateShare'] as const
  ).forEach(share);
  const faultSum =
    options.failRate + options.rateLimitRate + options.dropRate + options.ambiguousRate + options.htmlRate;
  check(
    faultSum <= 1,
    'failRate + rateLimitRate + dropRate + ambiguousRate + htmlRate',
    'a total share <= 1',
    faultSum,
  );
  checkSettings(options);
  return { ...options, suppliers: { ...options.suppliers } };
}

/** The checks of the options that are not numbers of time or shares: port, tokens, seed, dates, dialect, suppliers. */
function checkSettings(options: SandboxOptions): void {
  check(
    Number.isInteger(options.port) && options.port >= 0 && options.port <= 65535,
    'port',
    'an integer 0..65535',
    options.port,
  );
  check(
    Number.isFinite(options.tokenTtlSeconds) && options.tokenTtlSeconds > 0,
    'tokenTtlSeconds',
    'a number > 0',
    options.tokenTtlSeconds,
  );
  check(
    Number.isFinite(options.refreshTtlSeconds) && options.refreshTtlSeconds > 0,
    'refreshTtlSeconds',
    'a number > 0',
    options.refreshTtlSeconds,
  );
  check(Number.isSafeInteger(options.seed), 'seed', 'an integer', options.seed);
  check(
    Number.isInteger(options.maxBodyBytes) && options.maxBodyBytes > 0,
    'maxBodyBytes',
    'an integer > 0',
    options.maxBodyBytes,
  );
  check(typeof options.apiKey === 'string' && options.apiKey.length > 0, 'apiKey', 'a non-empty string', '(hidden)');
  check(
    DATE.test(options.openPeriodStart) && !Number.isNaN(Date.parse(options.openPeriodStart)),
    'openPeriodStart',
    'a date YYYY-MM-DD',
    options.openPeriodStart,
  );
  check(isDialect(options.dialect), 'dialect', '"spec" or "kraken"', options.dialect);
  check(
    options.contract === undefined || options.dialect === 'kraken',
    'contract',
    "the kraken dialect with a contract (a tenant document describes the platform's own forms)",
    options.dialect,
  );
  check(options.today === undefined || DATE.test(options.today), 'today', 'a date YYYY-MM-DD', options.today);
  check(
    /^[A-Z][A-Z_]*$/.test(options.transferStatusWord),
    'transferStatusWord',
    "an upper-case word (COMPLETED, or a tenant's: PENDING, IN_PROGRESS, REJECTED)",
    options.transferStatusWord,
  );
  check(
    options.processingStatusWord === undefined || /^[A-Z][A-Z_]*$/.test(options.processingStatusWord),
    'processingStatusWord',
    'an upper-case word such as QUEUED_FOR_REVIEW',
    options.processingStatusWord,
  );
  check(
    [200, 429, 503].includes(options.throttleTokenStatus),
    'throttleTokenStatus',
    '200 (KT-CT-1199), 429 or 503',
    options.throttleTokenStatus,
  );
  for (const [code, status] of Object.entries(options.suppliers)) {
    check(code.length > 0, 'suppliers', 'non-empty supplier codes', code);
    check(
      (SUPPLIER_STATUSES as readonly string[]).includes(status),
      `suppliers.${code}`,
      SUPPLIER_STATUSES.join(', '),
      status,
    );
  }
}

/** Parses `ACME:Ongoing,PAUSED:Paused` (status optional, default Ongoing; case-insensitive). */
export function parseSuppliers(text: string): Record<string, SupplierStatus> {
  const suppliers: Record<string, SupplierStatus> = {};
  for (const part of text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const [code = '', statusText = 'Ongoing', ...rest] = part.split(':').map((item) => item.trim());
    const status = SUPPLIER_STATUSES.find((item) => item.toLowerCase() === statusText.toLowerCase());
    if (!code || rest.length > 0 || !status) {
      throw new RangeError(
        `--suppliers: expected CODE[:STATUS] items separated by commas, STATUS one of ` +
          `${SUPPLIER_STATUSES.join(', ')}; got ${JSON.stringify(part)}`,
      );
    }
    suppliers[code] = status;
  }
  if (Object.keys(suppliers).length === 0)
    throw new RangeError('--suppliers: expected at least one supplier, e.g. ACME:Ongoing');
  return suppliers;
}
