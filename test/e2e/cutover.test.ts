import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { CHECKOUT_MIGRATE, counts } from './cron-host.js';
import { convergesWithinFiveRuns, mailsWhenAPersonMustAct, nightsUntilProcessed } from './cron-recipe.js';
import { writeE2eExport, type E2eExport } from './export.js';
import { push } from './helpers.js';

// A cut-over that runs itself for several nights (docs/operators-guide.md section 3): the guide's crontab, read from
// the guide and run as cron runs it (test/e2e/cron-host.ts, test/e2e/cron-recipe.ts), and what a run does when the
// service refuses the cohort's configuration.

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cutover-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

// The same recipe runs with the command the packed tarball installs in test/e2e/install.test.ts.
describe("the operators' guide's crontab, with this checkout's binary for the installed command", () => {
  it('is what cron would run: --no-wait pushes converge, mailing nobody while nothing needs a person', () =>
    nightsUntilProcessed(join(root, 'srv'), CHECKOUT_MIGRATE));

  it('mails the lead once a morning while data waits for a person (status exit 5), not every push', () =>
    mailsWhenAPersonMustAct(join(root, 'srv-data'), CHECKOUT_MIGRATE));

  it('converges against the sandbox in its own process (processing 0.3-0.9 s): 200 accounts with every record kind land within 5 runs, and status exits 0', () =>
    convergesWithinFiveRuns(join(root, 'srv-own-process'), CHECKOUT_MIGRATE));
});

describe('a configuration refusal (an import supplier the service does not know yet)', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ processingMs: 20 });
  });
  afterAll(async () => sandbox.close());

  it('stops the run after at most 2 x concurrency creates (exit 3, what to fix), holds nothing back: once the supplier is set up the next run sends every account', async () => {
    const data = newcoExport(join(root, 'newco'), 40, 'NEW');
    const state = join(root, 'newco', 'state');
    const refused = await push(sandbox, data.dir, state, ['--concurrency', '4']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('configuration_refused');
    expect(refused.stderr).toContain('the service does not know import supplier NEWCO, or does not take it yet');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(creates(sandbox)).toBeLessThanOrEqual(2 * 4);
    // Staging stopped with the run: what it staged is held back in nothing (staged, not invalid), none created.
    expect(Object.keys(counts(state))).toEqual(['staged']);
    expect(sandbox.inspect.accounts('NEWCO')).toEqual([]);

    sandbox.control.setSupplierStatus('NEWCO', 'Ongoing');
    const sent = await push(sandbox, data.dir, state, ['--concurrency', '4']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(counts(state)).toEqual({ done: 40 });
    const accounts = sandbox.inspect.accounts('NEWCO');
    expect(accounts).toHaveLength(40);
    expect(accounts.every((account) => account.createRequestsAccepted === 1)).toBe(true);
  });

  it('accounts an earlier version held back as invalid for it are sent again by --retry-invalid CODE, and only by it', async () => {
    sandbox.control.setSupplierStatus('NEWCO', 'Ongoing');
    const data = newcoExport(join(root, 'held'), 6, 'HELD');
    const state = join(root, 'held', 'state');
    const first = await push(sandbox, data.dir, state, []);
    expect(first.code, first.stderr).toBe(0);
    // What an earlier version left: the accounts refused on import_supplier held as invalid, never created.
    const ledger = Ledger.open(state);
    for (const number of data.valid) {
      const account = ledger.findAccount('NEWCO', number);
      ledger.batch(() => {
        ledger.updateAccountNow(account?.id ?? 0, {
          state: 'invalid',
          error: { code: 'invalid_import_supplier', detail: 'not known', attr: 'import_supplier' },
        });
        ledger.replaceIssues(account?.id ?? 0, [
          { code: 'invalid_import_supplier', message: 'not known', attr: 'import_supplier', source: 'service' },
        ]);
        ledger.updateItemsNow(
          ledger.read.items(account?.id ?? 0).map((item) => item.id),
          { state: 'pending' },
        );
      });
    }
    ledger.close();
    const plain = await push(sandbox, data.dir, state, []);
    expect(plain.code).toBe(5);
    expect(counts(state)).toEqual({ invalid: 6 });
    const retried = await push(sandbox, data.dir, state, ['--retry-invalid', 'invalid_import_supplier']);
    expect(retried.stderr).toContain(
      '--retry-invalid invalid_import_supplier: 6 account(s) the service refused with this code are sent again',
    );
    // Already imported by the first run: adopted, and their records (dedup) settled again.
    expect(retried.code, retried.stderr).toBe(0);
    expect(counts(state)).toEqual({ done: 6 });
  });
});

/** An export of `size` clean accounts of the supplier NEWCO, which the sandbox does not know until it is set up. */
function newcoExport(dir: string, size: number, prefix: string): E2eExport {
  const data = writeE2eExport(dir, size, prefix, 'spec', { clean: true });
  for (const file of ['accounts.csv', 'payment_instructions.csv']) {
    const path = join(data.dir, file);
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll(',ACME,', ',NEWCO,'));
  }
  return data;
}

function creates(sandbox: RunningSandbox): number {
  return sandbox.inspect
    .requests()
    .filter((entry) => entry.method === 'POST' && entry.path === '/v2/data-import/accounts/').length;
}
