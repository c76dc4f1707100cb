import { afterEach, describe, expect, it } from 'vitest';
import { HtmlAnswerError } from '../../src/api/index.js';
import { account, startHarness, type Harness } from './helpers/sandbox-client.js';
import { listItems } from './helpers/list-items.js';

// Answers that are not the service's (docs/api-client.md "Errors"): an HTML page in any request's place is a wrong
// endpoint or a proxy/login page, fatal at once, never resent and never an account's outcome.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
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
