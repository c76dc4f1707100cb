import { afterEach, describe, expect, it } from 'vitest';
import {
  AbortedError,
  RetryAfterTooLongError,
  TimeoutError,
  createImportServiceClient,
  type ClientEvent,
  type ServiceClient,
} from '../../src/api/index.js';
import { account, startHarness, type Harness } from './helpers/sandbox-client.js';
import { listItems } from './helpers/list-items.js';
import { json, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

// Every wait of the client is bounded (docs/api-client.md "Time-outs" and "Stopping"): a pause the service asks for
// beyond the ceiling stops the run instead of being waited out, a trickling answer ends at the request's deadline, and
// the run's stop ends every wait and every read at once, while a write in flight is awaited until close().

let harness: Harness | undefined;
let server: ScriptedServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await harness?.close();
  await server?.close();
  [client, harness, server] = [undefined, undefined, undefined];
});

/** Resolves at the first event the predicate accepts. */
function eventSeen(events: ClientEvent[], accept: (event: ClientEvent) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = setInterval(() => {
      if (events.some(accept)) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
}

describe('a pause the service asks for has a ceiling', () => {
  it('Retry-After: 86400 on a request: fatal at once, naming the header and the wait; the client is not paused', async () => {
    harness = await startHarness({ rateLimitRate: 1, retryAfterSeconds: 86_400 });
    const error = await harness.client.createAccount(account('R-1')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect(error).toMatchObject({ code: 'retry_after_too_long', fatal: true, exitCode: 3, status: 429, attempts: 1 });
    expect((error as Error).message).toContain('Retry-After: 86400');
    expect((error as Error).message).toContain('86,400 s');
    expect((error as Error).message).toContain('120 s');
    expect(harness.sandbox.inspect.requests().filter((entry) => entry.status === 429)).toHaveLength(1);
    expect(harness.client.stats().pausedUntil).toBe(0);
    expect(harness.events.filter((event) => event.type === 'limit_changed')).toEqual([]);
  });

  it('the same ceiling holds for the token mutation, and for an HTTP date', async () => {
    harness = await startHarness(
      { rateLimitRate: 1, retryAfterSeconds: 3, faultTokenIssue: true },
      {
        retry: { maxRetryAfterMs: 2_000 },
      },
    );
    const error = await harness.client.getImportStatus('ACME', 'R-2').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'retry_after_too_long', endpoint: 'obtainToken', retryAfterMs: 3_000 });
    server = await startScriptedServer((_request, response) =>
      json(response, 429, { detail: 'later' }, { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() }),
    );
    client = createImportServiceClient({ baseUrl: server.url, credentials: { apiKey: 'api-key-for-tests' } });
    const dated = await client.getImportStatus('ACME', 'R-3').catch((caught: unknown) => caught);
    expect(dated).toBeInstanceOf(RetryAfterTooLongError);
    expect((dated as Error).message).toMatch(/Retry-After: \w{3}, \d{2} \w{3} \d{4}/);
  });
});

// The run's clock never steps (docs/limits.md "Clocks"), so after the wall clock is stepped it is off from the dates a
// service writes. An HTTP-date Retry-After is read against the answer's own Date, else the wall clock: here the run's
// clock is an hour behind the wall clock (stepped forward an hour after the process started), and the service asks
// for 30 s.
describe('an HTTP-date Retry-After after the wall clock was stepped', () => {
  const WALL = Date.UTC(2026, 10, 28, 12);
  const httpDate = (ms: number): string => new Date(ms).toUTCString();

  async function waitsFor(headers: Record<string, string>, sendDate: boolean): Promise<number[]> {
    let calls = 0;
    server = await startScriptedServer((_request, response) => {
      calls += 1;
      response.sendDate = sendDate;
      if (calls === 1) json(response, 429, { detail: 'later' }, headers);
      else json(response, 404, { detail: 'Not found.', code: 'not_found' });
    });
    const sleeps: number[] = [];
    let slept = 0;
    client = createImportServiceClient({
      baseUrl: server.url,
      credentials: { apiKey: 'api-key-for-tests' },
      clock: { now: () => WALL - 3_600_000 + slept },
      wallClock: { now: () => WALL + slept },
      sleep: (ms) => {
        sleeps.push(ms);
        slept += ms;
        return Promise.resolve();
      },
    });
    expect(await client.getImportStatus('ACME', 'H-1')).toBeNull();
    return sleeps;
  }

  it("is read against the answer's Date header", async () => {
    const sleeps = await waitsFor({ 'retry-after': httpDate(WALL + 30_000), date: httpDate(WALL) }, true);
    expect(sleeps).toContain(30_000);
  });

  it('is read against the wall clock when the answer has no Date', async () => {
    const sleeps = await waitsFor({ 'retry-after': httpDate(WALL + 30_000) }, false);
    expect(sleeps).toContain(30_000);
  });
});

describe('a whole request has a deadline', () => {
  it('an answer trickling a byte at a time ends at the deadline, its body included', async () => {
    // The deadline is long enough for the token and the create to be answered on a loaded machine (until the first
    // answer it bounds them too, and missing it there is no_answer), and far shorter than the byte-a-second answer.
    harness = await startHarness({ trickleMs: 1_000 }, { maxRetries: 0, timeouts: { requestMs: 5_000 } });
    await harness.client.createAccount(account('D-1'));
    const error = await harness.client.getImportStatus('ACME', 'D-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', phase: 'sent', endpoint: 'getImportStatus' });
    expect((error as Error).message).toContain('no whole answer within 5 s');
  });

  it('a list has its own, longer deadline', async () => {
    harness = await startHarness({ trickleMs: 1_000 }, { maxRetries: 0, timeouts: { requestMs: 60_000, listMs: 300 } });
    await harness.client.createAccount(account('L-1'));
    const error = await harness.client.listAllImports('ACME', listItems).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'timeout', endpoint: 'listAllImports' });
    expect((error as Error).message).toContain('0.3 s');
  });
});

describe("the run's stop ends every wait", () => {
  it('a pause the service asked for (within the ceiling) ends at once; later calls send nothing', async () => {
    const stop = new AbortController();
    harness = await startHarness({ rateLimitRate: 1, retryAfterSeconds: 100 }, { signal: stop.signal });
    const { client: paused, events, sandbox } = harness;
    const first = paused.createAccount(account('P-1')).catch((caught: unknown) => caught);
    const second = paused.getImportStatus('ACME', 'P-2').catch((caught: unknown) => caught);
    await eventSeen(events, (event) => event.type === 'rate_limited');
    stop.abort();
    const errors = await Promise.all([first, second]);
    for (const error of errors) expect(error).toBeInstanceOf(AbortedError);
    const sent = sandbox.inspect.requestCount();
    expect(await paused.getImportStatus('ACME', 'P-3').catch((caught: unknown) => caught)).toBeInstanceOf(AbortedError);
    expect(sandbox.inspect.requestCount()).toBe(sent);
  });

  it('a read in flight is cut off; a write in flight is awaited, and close() cuts off what is left', async () => {
    const stop = new AbortController();
    let began!: () => void;
    const answering = new Promise<void>((resolve) => (began = resolve));
    const held: Array<() => void> = [];
    server = await startScriptedServer((request, response) => {
      response.writeHead(request.method === 'GET' ? 200 : 201, { 'content-type': 'application/json' });
      response.write(request.method === 'GET' ? '{"status": "PEN' : '{');
      held.push(() => response.end(request.method === 'GET' ? 'DING"}' : '}'));
      if (held.length === 2) began();
    });
    client = createImportServiceClient({
      baseUrl: server.url,
      credentials: { apiKey: 'api-key-for-tests' },
      signal: stop.signal,
    });
    const read = client.getImportStatus('ACME', 'W-1').catch((caught: unknown) => caught);
    const write = client.createAccount(account('W-2')).catch((caught: unknown) => caught);
    await answering;
    stop.abort();
    expect(await read).toMatchObject({ code: 'aborted', endpoint: 'getImportStatus' });
    for (const finish of held) finish();
    expect(await write).toEqual({ kind: 'scheduled' });

    const another = createImportServiceClient({ baseUrl: server.url, credentials: { apiKey: 'api-key-for-tests' } });
    held.length = 0;
    const cut = another.createAccount(account('W-3')).catch((caught: unknown) => caught);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => held.length > 0 && (clearInterval(check), resolve()), 5);
    });
    await another.close();
    expect(await cut).toMatchObject({ phase: 'sent', ambiguous: true });
  });
});
