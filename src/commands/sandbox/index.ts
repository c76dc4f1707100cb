import { InvalidArgumentError, type Command } from 'commander';
import { resolve } from 'node:path';
import { loadContractFile } from '../../config/contract-file.js';
import { parseDialectFlag } from '../../config/service.js';
import { ExitCode, messageOf, UsageError } from '../../errors.js';
import { numberOption } from '../common/option-parsers.js';
import {
  DEFAULT_API_KEY,
  parseSuppliers,
  startSandbox,
  type RunningSandbox,
  type SandboxOptions,
} from '../../sandbox/index.js';
import { parseDate } from '../common/option-parsers.js';
import { checkSandboxReach } from './exposure.js';
import { sandboxKeyOf } from './key.js';
import { SETTING_ENV } from '../../config/precedence.js';

// `migrate sandbox`: runs the local simulator of the import service until SIGINT/SIGTERM.
// Thin: flags -> options -> startSandbox; the behaviour lives in src/sandbox/.

/** A share from 0 to 1; a number of at least 0 (milliseconds, seconds, a rate). */
const share = (name: string): ((value: string) => number) => numberOption(name, { min: 0, max: 1, fractions: true });
const atLeastZero = (name: string): ((value: string) => number) => numberOption(name, { min: 0, fractions: true });

function suppliersFlag(value: string): Record<string, string> {
  try {
    return parseSuppliers(value);
  } catch (error) {
    throw new InvalidArgumentError(messageOf(error));
  }
}

interface SandboxFlags extends Omit<Partial<SandboxOptions>, 'log' | 'suppliers' | 'contract'> {
  suppliers?: SandboxOptions['suppliers'];
  /** --contract FILE: the tenant's document to rehearse. */
  contract?: string;
  tokenTtl?: number;
  retryAfter?: number;
  requestLog?: boolean;
  verbose?: boolean;
  /** --public: listening beyond this machine is meant. */
  public?: boolean;
  /** --api-key-file FILE: the sandbox's key on the file's first line. */
  apiKeyFile?: string;
}

function describe(sandbox: RunningSandbox, keyGiven: string | undefined, reach: string | undefined): string {
  const { options } = sandbox;
  const suppliers = Object.entries(options.suppliers)
    .map(([code, status]) => `${code} (${status})`)
    .join(', ');
  const faults = [
    options.latencyMs || options.jitterMs ? `latency ${options.latencyMs} ms + jitter ${options.jitterMs} ms` : '',
    options.failRate ? `500s ${options.failRate}` : '',
    options.rateLimitRate ? `429s ${options.rateLimitRate} (Retry-After ${options.retryAfterSeconds} s)` : '',
    options.dropRate ? `drops ${options.dropRate}` : '',
    options.ambiguousRate ? `ambiguous ${options.ambiguousRate}` : '',
    options.htmlRate ? `HTML login pages ${options.htmlRate}` : '',
    options.maxRps ? `max ${options.maxRps} requests/s` : '',
    options.lostCreateShare
      ? `creates answered 201 then lost ${options.lostCreateShare}${options.lostCreateOnce ? ' (first only)' : ''}`
      : '',
    options.trickleMs ? `GET answers trickle a byte every ${options.trickleMs} ms` : '',
    options.errorDetailChars ? `error details padded to ${options.errorDetailChars} characters` : '',
    options.echoCredentials ? 'errors echo the credentials' : '',
    options.transferStatusWord === 'COMPLETED' ? '' : `v1 status ${options.transferStatusWord} for accounts that exist`,
    options.processingStatusWord ? `status ${options.processingStatusWord} while processing` : '',
    options.throttleTokenRequests || options.throttleTokenMs
      ? `token requests throttled (first ${options.throttleTokenRequests}, ${options.throttleTokenMs} ms; ` +
        `HTTP ${options.throttleTokenStatus})`
      : '',
  ].filter(Boolean);
  return [
    `Sandbox listening on ${sandbox.url}`,
    ...(reach === undefined ? [] : [reach]),
    // The sandbox's own key is a local test credential: shown when it is the default, never when given.
    `API key: ${keyGiven === undefined ? DEFAULT_API_KEY : `(the value given by ${keyGiven})`}`,
    `Import suppliers: ${suppliers}`,
    `Dialect: ${options.dialect}` +
      (options.dialect === 'kraken' ? " (the real platform's names and request forms)" : ''),
    ...(options.contract ? [`Contract: ${options.contract.title} (every request is judged by its schemas too)`] : []),
    `Processing: ${options.processingMs} ms` +
      (options.processingSpreadMs ? ` + 0..${options.processingSpreadMs} ms` : '') +
      `; errored share ${options.erroredShare}; open statement period from ` +
      `${options.openPeriodStart}; seed ${options.seed}`,
    `Faults: ${faults.length > 0 ? faults.join(', ') : 'none'}`,
    'Press Ctrl-C to stop.',
  ].join('\n');
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

async function runSandbox(flags: SandboxFlags, setExitCode: (code: number) => void): Promise<void> {
  const {
    tokenTtl,
    retryAfter,
    requestLog,
    verbose,
    contract: contractFile,
    public: open,
    apiKeyFile,
    ...rest
  } = flags;
  const key = await sandboxKeyOf(flags, process.env, process.cwd());
  // Before anything else is read or bound: beyond this machine only with a key of the operator's own and --public.
  const reach = checkSandboxReach({ host: flags.host ?? '127.0.0.1', apiKey: key.apiKey, public: open === true });
  // Read before the sandbox starts: a contract that cannot be read is a usage error naming the file.
  const contract =
    contractFile === undefined
      ? undefined
      : await loadContractFile(resolve(process.cwd(), contractFile), `--contract ${contractFile}`);
  for (const warning of contract?.warnings ?? [])
    process.stderr.write(`migrate: warning: contract: ${warning}
`);
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({
      ...rest,
      apiKey: key.apiKey,
      contract,
      tokenTtlSeconds: tokenTtl,
      retryAfterSeconds: retryAfter,
      recordRequests: requestLog,
      log: verbose ? (line) => process.stderr.write(`${line}\n`) : undefined,
    });
  } catch (error) {
    const message = messageOf(error);
    throw new UsageError(`cannot start the sandbox: ${message}`, 'sandbox_start_failed', error);
  }
  process.stdout.write(`${describe(sandbox, key.given, reach)}\n`);
  await waitForSignal();
  await sandbox.close();
  setExitCode(ExitCode.interrupted);
}

export function registerSandboxCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('sandbox')
    .description('Run a local simulator of the import service (for rehearsals, demos and tests) until Ctrl-C.')
    .option('--port <n>', 'port to listen on; 0 = any free port', numberOption('--port', { min: 0, max: 65535 }), 0)
    .option(
      '--host <host>',
      'address to listen on; one that is not a loopback address needs a key of your own and --public',
      '127.0.0.1',
    )
    .option(
      '--public',
      'listen beyond this machine (a --host that is not a loopback address): whoever holds the key reads every ' +
        'payload sent',
    )
    .option(
      '--dialect <dialect>',
      '"spec" (default): the spec\'s names and shapes; "kraken": the real platform\'s (task_params, money as ' +
        'strings, meter points)',
      parseDialectFlag,
    )
    .option(
      '--contract <file>',
      "a tenant's OpenAPI document (its /data-import/schema/; needs --dialect kraken): requests are also accepted " +
        'and refused as its schemas say',
    )
    .option(
      '--api-key-file <file>',
      `file holding the API key the token mutation accepts, on its first line (or set ${SETTING_ENV.apiKey}; ` +
        `default ${DEFAULT_API_KEY})`,
    )
    .option('--api-key <key>', 'the key itself (visible to every user of this machine in the process list: warned)')
    .option('--suppliers <list>', 'import suppliers and their status, e.g. ACME:Ongoing,PAUSED:Paused', suppliersFlag)
    .option(
      '--processing-ms <ms>',
      'time from create to PROCESSED/ERRORED (default 200)',
      atLeastZero('--processing-ms'),
    )
    .option(
      '--processing-spread-ms <ms>',
      "added to each account's processing time: 0..ms, fixed by the seed and the account (default 0)",
      atLeastZero('--processing-spread-ms'),
    )
    .option('--errored-share <share>', 'share of created accounts that end ERRORED (0..1)', share('--errored-share'))
    .option(
      '--open-period-start <date>',
      'first day of the open statement period (default: first of this month)',
      parseDate,
    )
    .option('--today <date>', 'the date for "not in the future" rules (default: today, UTC)', parseDate)
    .option(
      '--token-ttl <seconds>',
      'access token lifetime (default 3600)',
      numberOption('--token-ttl', { min: 0.001, fractions: true }),
    )
    .option(
      '--seed <n>',
      'seed of every random choice (default 1)',
      numberOption('--seed', { min: -(2 ** 31), max: 2 ** 31 }),
    );
  registerFaultOptions(command);
  registerTenantOptions(command);
  command.action(async (flags: SandboxFlags) => runSandbox(flags, setExitCode));
}

function wordFlag(value: string): string {
  if (!/^[A-Z][A-Z_]*$/.test(value))
    throw new InvalidArgumentError(`expected an upper-case word such as PENDING, got ${JSON.stringify(value)}.`);
  return value;
}

/** --throttle-token-status: how the sandbox refuses a token request (the shell completion offers these). */
export const THROTTLE_TOKEN_STATUSES: readonly string[] = ['200', '429', '503'];

/** Answers as tenants give them beyond the spec (docs/sandbox.md "Answering as a tenant does"). */
function registerTenantOptions(command: Command): void {
  command
    .option(
      '--transfer-status-word <word>',
      "v1 transfer status of an account that exists (with its number): COMPLETED (default, the spec) or a tenant's " +
        'word: PENDING, IN_PROGRESS, REJECTED (Octopus Energy France, Plenitude France)',
      wordFlag,
    )
    .option(
      '--processing-status-word <word>',
      'a word the spec does not give (e.g. QUEUED_FOR_REVIEW) answered by v2 and v1 status for a process still running',
      wordFlag,
    )
    .option(
      '--throttle-token-requests <n>',
      'the first n token requests are refused as too many requests (default 0)',
      numberOption('--throttle-token-requests', { min: 0 }),
    )
    .option(
      '--throttle-token-ms <ms>',
      "token requests within ms of the sandbox's start are refused as too many requests (default 0)",
      atLeastZero('--throttle-token-ms'),
    )
    .option(
      '--throttle-token-status <status>',
      'how: 200 (KT-CT-1199 in the GraphQL errors, default), 429 or 503 (with --retry-after)',
      (value: string) => {
        if (!THROTTLE_TOKEN_STATUSES.includes(value))
          throw new InvalidArgumentError(`expected 200, 429 or 503, got ${JSON.stringify(value)}.`);
        return Number(value);
      },
    );
}

/** The sandbox's faults: latency, failures, throttling, dropped connections, odd answers. */
function registerFaultOptions(command: Command): void {
  command
    .option('--latency-ms <ms>', 'latency added to every response', atLeastZero('--latency-ms'))
    .option('--jitter-ms <ms>', 'random extra latency, 0..ms', atLeastZero('--jitter-ms'))
    .option('--fail-rate <share>', 'share of requests answered 500', share('--fail-rate'))
    .option('--rate-limit-rate <share>', 'share of requests answered 429 with Retry-After', share('--rate-limit-rate'))
    .option('--retry-after <seconds>', 'Retry-After of the injected 429s (default 1)', atLeastZero('--retry-after'))
    .option('--drop-rate <share>', 'share of connections destroyed before the change is applied', share('--drop-rate'))
    .option(
      '--ambiguous-rate <share>',
      'share of requests applied, then the connection destroyed',
      share('--ambiguous-rate'),
    )
    .option(
      '--html-rate <share>',
      'share of requests answered 200 with an HTML login page, as an SSO proxy in front of a service does',
      share('--html-rate'),
    )
    .option(
      '--max-rps <n>',
      'a real rate limit: 429 + Retry-After above n requests per second',
      atLeastZero('--max-rps'),
    )
    .option('--fault-token-issue', 'apply the random faults to the token mutation too')
    .option(
      '--echo-credentials',
      "every error echoes the request's credentials and the API key in the encodings a service may use (redaction " +
        'tests)',
    )
    .option(
      '--error-detail-chars <n>',
      "every error's detail (error answers, a status's latest_error) padded to n characters (default 0: off)",
      numberOption('--error-detail-chars', { min: 0 }),
    )
    .option(
      '--trickle-ms <ms>',
      'answers to GET requests are sent one byte every ms (a trickle; default 0: off)',
      atLeastZero('--trickle-ms'),
    )
    .option(
      '--flaky-attempts <n>',
      'how many 500s a FLAKY- payment instruction gets before it succeeds (default 1)',
      numberOption('--flaky-attempts', { min: 0 }),
    )
    .option(
      '--multiple-payment-instructions',
      'accept several payment instructions per account (default: one active instruction per account, as the real ' +
        'platform)',
    )
    .option(
      '--lost-answer-ms <ms>',
      'how long a LOST- payment instruction (created, then no answer) holds its connection before dropping it ' +
        '(default 0)',
      atLeastZero('--lost-answer-ms'),
    )
    .option(
      '--lost-create-share <share>',
      'share of accounts whose create is answered 201 and then lost: no import process appears (0..1)',
      share('--lost-create-share'),
    )
    .option('--lost-create-once', 'only the first create of those accounts is lost; a create sent again lands')
    .option(
      '--max-body-bytes <n>',
      'request bodies above this get 413 (default 5 MiB)',
      numberOption('--max-body-bytes', { min: 1 }),
    )
    .option('--no-retain-payloads', 'do not keep create payloads (large benchmarks)')
    .option('--no-request-log', 'do not keep a request log (large benchmarks)')
    .option('--verbose', 'log one line per request to stderr (method, path, status, ms)');
}
