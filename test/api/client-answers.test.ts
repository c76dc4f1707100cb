import { afterEach, describe, expect, it } from 'vitest';
import {
  HtmlAnswerError,
  NotFoundError,
  ServerError,
  createImportServiceClient,
  type ServiceClient,
} from '../../src/api/index.js';
import { startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';
import { account, startHarness, type Harness } from './helpers/sandbox-client.js';
import { listItems } from './helpers/list-items.js';

// Answers that are not the service's (docs/api-client.md "Errors"): an HTML page in any request's place is a wrong
// endpoint or a proxy/login page, fatal at once, never resent and never an account's outcome. An error body is read
// up to a bound, and what the service says in it is cut to the detail limit.

let harness: Harness | undefined;
let server: ScriptedServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await harness?.close();
  await server?.close();
  [client, harness, server] = [undefined, undefined, undefined];
});

describe('an HTML page in answer', () => {
  it.each([
    ['createAccount', (h: Harness) => h.client.createAccount(account('H-1')), '/v2/data-import/accounts/'],
    ['getImportStatus', (h: Harness) => h.client.getImportStatus('ACME', 'H-2'), '/v2/data-import/accounts/ACME/H-2/'],
    [
      'listImportedAccounts',
      (h: Harness) => h.client.listImportedAccounts('ACME', listItems),
      '/v1/data-import/imported-account-import-processes/ACME/',
    ],
  ] as const)(
    '%s answered 200 with a login page: fatal at once, one request, nothing applied',
    async (name, call, path) => {
      harness = await startHarness({ htmlRate: 1 });
      const error = await call(harness).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(HtmlAnswerError);
      expect(error).toMatchObject({ code: 'html_answer', fatal: true, exitCode: 3, status: 200, attempts: 1 });
      expect((error as Error).message).toBe(
        `${name}: ${harness.sandbox.url}${path} answered HTTP 200 with an HTML page (Content-Type: text/html; ` +
          `charset=utf-8; title "Sign in - Example Corp single sign-on"), not the import service's JSON: the base URL ` +
          `is wrong (--base-url, MIGRATE_BASE_URL), or a proxy or single-sign-on login page answers in the service's ` +
          `place (check HTTPS_PROXY, HTTP_PROXY and NO_PROXY). The run stopped; the page was not taken as any ` +
          `account's answer.`,
      );
      expect(harness.sandbox.inspect.requests().filter((entry) => entry.fault === 'html')).toHaveLength(1);
      expect(harness.events.filter((event) => event.type === 'retry')).toEqual([]);
      expect(harness.sandbox.inspect.accountCount()).toBe(0);
    },
  );
});

describe('error bodies are bounded', () => {
  it('at most 1 MiB of an error body is read: a 10 MiB one is answered from its start while the rest never comes', async () => {
    const declared = 10 * 1024 * 1024;
    server = await startScriptedServer((_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json', 'content-length': String(declared) });
      // Somewhat more than the bound, then nothing: a client that waits for the whole body never answers.
      response.write(`{"detail": "${'x'.repeat(1024 * 1024 + 64 * 1024)}`);
    });
    client = createImportServiceClient({
      baseUrl: server.url,
      credentials: { apiKey: 'api-key-for-tests' },
      maxRetries: 0,
    });
    const error = await client.getImportStatus('ACME', 'B-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toBe(
      'getImportStatus: the service failed with HTTP 500: the error body is longer than the 1,048,576 bytes the tool ' +
        'reads of one (10,485,760 bytes in all); it was not read further',
    );
  });

  it('a detail of 100,000 characters is cut to 2,000 in the error, with its length stated', async () => {
    harness = await startHarness({ errorDetailChars: 100_000 });
    const error = await harness.client
      .createNotes({ import_supplier: 'ACME', external_account_number: 'B-2', notes: [{ body: 'a note' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    const message = (error as Error).message;
    expect(message).toMatch(/^createNotes: not found: .{2000}\.\.\. \(100,000 characters in all\)$/s);
  });
});
