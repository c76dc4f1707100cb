import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError, SupplierNotOngoingError, SupplierUnknownError } from '../../src/api/errors.js';
import { runPush, sourceOf, type EngineSettings } from '../../src/engine/index.js';
import { classifyFailure, configurationIssue } from '../../src/engine/failure.js';
import { Ledger } from '../../src/ledger/index.js';
import type { ExportEntry } from '../../src/mapping/types.js';
import { accountEntry, fast, stream } from './build.js';
import { FakeService } from './fake-service.js';

// A refusal that concerns the run's configuration rather than one account's data (failure.ts) stops the run after the
// requests in flight (exit 3, what to fix) and holds nothing back: what was refused is sent by the next run.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-configuration-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function push(service: FakeService, entries: ExportEntry[] | undefined, settings: Partial<EngineSettings> = {}) {
  const ledger = Ledger.open(dir);
  ledger.startRun('push', {});
  try {
    return await runPush({
      ledger,
      client: service,
      settings: { ...fast, ...settings },
      sink: { emit: () => undefined },
      source: entries && sourceOf(stream(entries)),
    });
  } finally {
    ledger.close();
  }
}

function inLedger<T>(read: (ledger: Ledger) => T): T {
  const ledger = Ledger.open(dir);
  try {
    return read(ledger);
  } finally {
    ledger.close();
  }
}

/** A service that does not know the supplier NEWCO until `known` is set: the sandbox's item on import_supplier. */
function withUnknownSupplier(service: FakeService): { creates: () => number; know: () => void } {
  let known = false;
  let creates = 0;
  const original = service.createAccount;
  // The fake's methods are typed by what they return; the real client's createAccount returns invalid too.
  Object.assign(service, {
    createAccount: async (payload: { external_account_number?: string }) => {
      creates += 1;
      if (known) return original(payload);
      service.calls.push('create');
      await new Promise((resolve) => setTimeout(resolve, 1));
      return {
        kind: 'invalid' as const,
        errors: [
          { attr: 'customers.0.email', code: 'invalid_email', detail: 'not an e-mail' },
          { attr: 'import_supplier', code: 'invalid_import_supplier', detail: '"NEWCO" is not an import supplier.' },
        ],
      };
    },
  });
  return { creates: () => creates, know: () => (known = true) };
}

const accounts = (count: number): ExportEntry[] =>
  Array.from({ length: count }, (_, n) => accountEntry({ number: `N-${String(n).padStart(3, '0')}`, notes: ['n'] }));

describe('configuration refusals', () => {
  it.each([
    [[{ attr: 'import_supplier', code: 'invalid_choice', detail: 'x' }], 'import_supplier'],
    [[{ attr: 'payload.import_supplier', code: 'invalid', detail: 'x' }], 'payload.import_supplier'],
    [[{ attr: 'task_params', code: 'required', detail: 'x' }], 'task_params'],
    [[{ attr: '', code: 'import_supplier_migration_not_ongoing', detail: 'x' }], ''],
    [[{ attr: 'customers.0.email', code: 'invalid_email', detail: 'x' }], undefined],
    // The supplier code of one record's own field is that record's: only the request's top-level field counts.
    [[{ attr: 'notes.0.import_supplier', code: 'invalid', detail: 'x' }], undefined],
  ])('%j concerns the configuration at %s', (issues, attr) => {
    expect(configurationIssue(issues)?.attr).toBe(attr);
  });

  it('are fatal, and say what to fix, thrown by the client too (the body code of its own)', () => {
    const paused = classifyFailure(
      new SupplierNotOngoingError('createAccount', 'PAUSED is paused', 'import_supplier_migration_not_ongoing', 400),
    );
    expect(paused).toMatchObject({ class: 'fatal', code: 'configuration_refused' });
    expect(paused.detail).toContain(
      'the import supplier is not accepting migrations: it is Paused or Complete on the service; ask the platform',
    );
    expect(paused.detail).toContain('(import_supplier_migration_not_ongoing: createAccount: PAUSED is paused)');
    const unknown = classifyFailure(new SupplierUnknownError('listImported', 'no', 'invalid_import_supplier', 400));
    expect(unknown.detail).toContain('the service does not know the import supplier, or does not take it yet');
    expect(classifyFailure(new AuthenticationError('obtainToken', 'refused')).class).toBe('fatal');
  });

  it('an unknown supplier: the run stops after at most 2 x concurrency creates, every account stays staged; the next run, the supplier set up, sends every account', async () => {
    const service = new FakeService();
    const supplier = withUnknownSupplier(service);
    const first = await push(service, accounts(60), { concurrency: 4 });
    expect(first.reason).toBe('fatal');
    expect(first.exitCode).toBe(3);
    expect(first.fatal?.code).toBe('configuration_refused');
    expect(first.fatal?.detail).toContain('(invalid_import_supplier on import_supplier: "NEWCO" is not an import');
    expect(first.fatal?.detail).toContain('the service does not know import supplier ACME, or does not take it yet');
    expect(supplier.creates()).toBeLessThanOrEqual(2 * 4);
    // Staging and sending go together: how much of the export was staged when the run stopped depends on how far it
    // was read; every account staged is still staged (none left creating or invalid), and the next run sends them all.
    expect(Object.keys(first.counts.accounts)).toEqual(['staged']);
    const refused = inLedger((ledger) => ledger.findAccount('ACME', 'N-000'));
    expect(refused?.error?.code).toBe('configuration_refused');
    expect(inLedger((ledger) => ledger.read.issues(refused?.id ?? 0))).toEqual([]);

    supplier.know();
    const second = await push(service, accounts(60), { concurrency: 4 });
    expect(second.exitCode).toBe(0);
    expect(second.counts.accounts).toEqual({ done: 60 });
    expect([...service.accounts.values()].every((account) => account.creates === 1)).toBe(true);
  });

  it('a create the run never sent (no token: wrong key) is staged, not "create unconfirmed"', async () => {
    const service = new FakeService();
    service.createAccount = async () => {
      service.calls.push('create');
      throw new AuthenticationError('obtainToken', 'the key was refused');
    };
    const result = await push(service, accounts(5), { concurrency: 2 });
    expect(result.exitCode).toBe(3);
    // However far the export was staged when the run stopped (staging and sending go together).
    expect(Object.keys(result.counts.accounts)).toEqual(['staged']);
  });

  it('records refused for the configuration go back to pending (not failed) and the run stops', async () => {
    const service = new FakeService();
    const original = service.createNotes;
    let refuse = true;
    Object.assign(service, {
      createNotes: async (request: Parameters<typeof original>[0]) => {
        if (!refuse) return original(request);
        service.calls.push('notes');
        return {
          kind: 'invalid' as const,
          errors: [{ attr: 'import_supplier', code: 'invalid_import_supplier', detail: 'not known' }],
        };
      },
    });
    const first = await push(service, accounts(3), { concurrency: 1 });
    expect(first.exitCode).toBe(3);
    expect(first.counts.items).toEqual({ note: { pending: 3 } });
    refuse = false;
    const second = await push(service, undefined, { concurrency: 1 });
    expect(second.exitCode).toBe(0);
    expect(second.counts.items).toEqual({ note: { done: 3 } });
  });

  it('--retry-invalid CODE releases accounts an earlier version held back as invalid for that code, and only those', () => {
    const ledger = Ledger.open(dir);
    try {
      ledger.startRun('push', {});
      const ids = ledger.batch(() =>
        ['HELD-1', 'HELD-2', 'DATA-1', 'LOCAL-1'].map((number) =>
          ledger.insertAccount(
            {
              importSupplier: 'ACME',
              externalAccountNumber: number,
              state: 'invalid',
              payload: '{}',
              fingerprint: 'f',
              originFile: 'accounts.csv',
              originLine: 2,
              origins: null,
            },
            { step: 'stage' },
          ),
        ),
      );
      const [held1 = 0, held2 = 0, data = 0, local = 0] = ids;
      ledger.batch(() => {
        ledger.replaceIssues(held1, [
          { code: 'invalid_email', message: 'x', attr: 'billing_email', source: 'service' },
          { code: 'invalid_import_supplier', message: 'x', attr: 'import_supplier', source: 'service' },
        ]);
        ledger.updateAccountNow(held2, { error: { code: 'invalid_import_supplier', detail: 'x' } });
        ledger.replaceIssues(data, [{ code: 'invalid_email', message: 'x', attr: 'billing_email', source: 'service' }]);
        ledger.replaceIssues(local, [{ code: 'invalid_import_supplier', message: 'x', source: 'local' }]);
        ledger.updateAccountNow(local, { error: { code: 'invalid_import_supplier', detail: 'x' } });
      });
      expect(ledger.releaseInvalid(['invalid_import_supplier'])).toBe(2);
      expect(ledger.accountById(held1)?.state).toBe('staged');
      expect(ledger.accountById(held2)?.state).toBe('staged');
      expect(ledger.accountById(data)?.state).toBe('invalid');
      expect(ledger.accountById(local)?.state).toBe('invalid');
      expect(ledger.read.history(held1).at(-1)).toMatchObject({
        step: 'release',
        fromState: 'invalid',
        toState: 'staged',
        detail: '--retry-invalid invalid_import_supplier',
      });
    } finally {
      ledger.close();
    }
  });
});
