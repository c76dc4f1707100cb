import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createImportServiceClient } from '../../src/api/index.js';
import { DEFAULT_ENGINE_SETTINGS, nullSink, runPush, sourceOf } from '../../src/engine/index.js';
import { Ledger } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { accountEntry, stream } from './build.js';

// The imported-accounts list over real HTTP against the sandbox: it is read as it arrives, so its size no longer caps
// it (docs/service.md "Status and list endpoints"); it is still called only while enough accounts wait for it.

let dir: string | undefined;
let sandbox: RunningSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const LIST_PATH = '/imported-account-import-processes/';
const CHECK_PATH = /account-transfer-status|\/v2\/data-import\/accounts\/ACME\//;

describe('the imported-accounts list in a push', () => {
  it('is called again after it has answered with more than 50,000 entries, and settles parked accounts', async () => {
    const seeded = 60_000;
    const accounts = 1_300;
    // The service's time stands still until every account is created and a list call has answered after that: that
    // answer names none of them, every later one all, whatever the machine's speed. (A call answered once the service's
    // time had moved could have started before the last creates: the accounts it did not know were parked would be
    // left to checks of their own, which never fall due here.)
    const start = Date.now();
    let listsWhenAllCreated: number | undefined;
    const listsServed = (): number =>
      running.inspect.requests().filter((entry) => entry.path.includes(LIST_PATH)).length;
    const clock = (): number =>
      listsWhenAllCreated !== undefined && listsServed() > listsWhenAllCreated ? start + 2_000 : start;
    const running = await startSandbox({ processingMs: 2_000, retainPayloads: false }, { clock });
    sandbox = running;
    let created = 0;
    sandbox.control.seedImported(
      'ACME',
      Array.from({ length: seeded }, (_, n) => `OLD-${n}`),
    );
    dir = mkdtempSync(join(tmpdir(), 'list-imported-'));
    const ledger = Ledger.open(dir);
    ledger.startRun('push', {});
    const client = createImportServiceClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey } });
    try {
      const result = await runPush({
        ledger,
        client,
        settings: {
          ...DEFAULT_ENGINE_SETTINGS,
          // One answer may hand out 48 x 32 parked accounts (imported-list.ts): all of them.
          concurrency: 48,
          // No status check of its own falls due during the test: the list is what settles every account.
          pollSchedule: { firstDelayMs: 600_000, factor: 1, maxDelayMs: 600_000, jitter: 0 },
        },
        sink: {
          emit: (event) => {
            if (event.type !== 'account' || event.to !== 'scheduled') return;
            created += 1;
            if (created === accounts) listsWhenAllCreated = listsServed();
          },
        },
        source: sourceOf(
          stream(Array.from({ length: accounts }, (_, n) => accountEntry({ number: `NEW-${n}` }, n + 2))),
        ),
      });
      expect(result.reason).toBe('finished');
      expect(ledger.countInState('done')).toBe(accounts);
      const byNumber = new Map(
        sandbox.inspect.accounts('ACME').map((account) => [account.externalAccountNumber, account]),
      );
      const sample = ledger.findAccount('ACME', 'NEW-777');
      expect(sample?.platformAccountNumber).toBe(byNumber.get('NEW-777')?.platformAccountNumber);
    } finally {
      ledger.close();
      await client.close();
    }
    const requests = sandbox.inspect.requests();
    // The first call is made on the ledger's estimate (nothing imported); every later one knows the list holds more than
    // 60,000 entries, which the former cap of 50,000 refused.
    expect(requests.filter((entry) => entry.path.includes(LIST_PATH)).length).toBeGreaterThanOrEqual(2);
    expect(requests.filter((entry) => CHECK_PATH.test(entry.path))).toEqual([]);
  }, 60_000);

  it('while accounts are still being created, answers for parked accounts', async () => {
    const accounts = 1_000;
    sandbox = await startSandbox({ processingMs: 100, latencyMs: 10, retainPayloads: false });
    dir = mkdtempSync(join(tmpdir(), 'list-imported-'));
    const ledger = Ledger.open(dir);
    ledger.startRun('push', {});
    const client = createImportServiceClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey } });
    const number = (n: number): string => `LF-${String(n).padStart(5, '0')}`; // sorted as text: staging overlaps
    let listed = 0;
    try {
      const result = await runPush({
        ledger,
        client,
        // First checks fall due seconds after their create, so that parked accounts wait in numbers whatever the
        // machine's speed (the poller's cadence while checks wait for the list, and the first delay the list's answers
        // teach, are table-tested in poll-schedule.test.ts).
        settings: {
          ...DEFAULT_ENGINE_SETTINGS,
          concurrency: 4,
          pollSchedule: { ...DEFAULT_ENGINE_SETTINGS.pollSchedule, firstDelayMs: 3_000 },
        },
        sink: nullSink,
        source: sourceOf(
          stream(Array.from({ length: accounts }, (_, n) => accountEntry({ number: number(n) }, n + 2))),
        ),
      });
      expect(result.reason).toBe('finished');
      expect(ledger.countInState('done')).toBe(accounts);
      for (let n = 0; n < accounts; n += 1) {
        const id = ledger.findAccount('ACME', number(n))?.id ?? 0;
        if (ledger.read.history(id).some((event) => event.detail === 'listed as imported')) listed += 1;
      }
    } finally {
      ledger.close();
      await client.close();
    }
    const requests = sandbox.inspect.requests();
    const creates = requests.filter((entry) => entry.method === 'POST' && entry.path === '/v2/data-import/accounts/');
    const lists = requests.filter((entry) => entry.path.includes(LIST_PATH));
    const checks = requests.filter((entry) => CHECK_PATH.test(entry.path));
    // The list is called while creates go on, and the accounts it names are settled without a check of their own.
    expect(lists[0]?.seq ?? Infinity).toBeLessThan(creates.at(-1)?.seq ?? 0);
    expect(listed).toBeGreaterThan(0);
    expect(new Set(checks.map((entry) => entry.path.split('/').at(-2))).size).toBeLessThan(accounts);
  }, 60_000);
});
