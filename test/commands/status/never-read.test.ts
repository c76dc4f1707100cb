import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportNeverRead } from '../../../src/commands/status/never-read.js';
import { Ledger } from '../../../src/ledger/index.js';
import { openLedgerSource } from '../../../src/commands/common/ledger-source.js';

// The accounts of the last push's export no push has read: a real ledger and real export directories.

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'never-read-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** An export directory whose accounts file has `accounts` rows below its header. */
function exportOf(name: string, accounts: number): string {
  const dir = join(root, name);
  mkdirSync(dir);
  const rows = Array.from({ length: accounts }, (_, n) => `A-${n},ACME`);
  writeFileSync(join(dir, 'accounts.csv'), ['external_account_number,import_supplier', ...rows, ''].join('\n'));
  return dir;
}

/** A ledger holding `held` accounts, after push runs of these export directories ending as given, in order. */
function ledgerAfter(held: number, runs: Array<[dir: string, status: string]>) {
  const state = join(root, 'state');
  const ledger = Ledger.open(state);
  for (let n = 0; n < held; n += 1)
    ledger.insertAccount(
      {
        importSupplier: 'ACME',
        externalAccountNumber: `A-${n}`,
        state: 'staged',
        payload: '{}',
        fingerprint: 'f',
        originFile: 'accounts.csv',
        originLine: n + 2,
        origins: null,
      },
      { step: 'stage' },
    );
  for (const [dir, status] of runs) ledger.finishRun(ledger.startRun('push', { exportDir: dir }), status, 130, {});
  ledger.close();
  return openLedgerSource(state);
}

describe('exportNeverRead', () => {
  it('after a stopped push: the export counted by its lines, less the accounts the ledger holds', async () => {
    const dir = exportOf('export', 10);
    const ledger = ledgerAfter(3, [[dir, 'interrupted']]);
    expect(await exportNeverRead(ledger)).toEqual({ dir, accounts: 10, never_read: 7 });
    ledger.close();
  });

  it('after a finished push: nothing to say (it read the whole export)', async () => {
    const dir = exportOf('export', 10);
    const ledger = ledgerAfter(3, [
      [dir, 'interrupted'],
      [dir, 'finished'],
    ]);
    expect(await exportNeverRead(ledger)).toBeNull();
    ledger.close();
  });

  it('the export of the last push, even when an earlier one was pushed later than another', async () => {
    const [first, second] = [exportOf('first', 10), exportOf('second', 50)];
    const ledger = ledgerAfter(3, [
      [first, 'interrupted'],
      [second, 'interrupted'],
      [first, 'interrupted'],
    ]);
    expect(await exportNeverRead(ledger)).toEqual({ dir: first, accounts: 10, never_read: 7 });
    ledger.close();
  });

  it('an export that is gone, or no push at all: null, never an error', async () => {
    const gone = exportOf('gone', 10);
    rmSync(gone, { recursive: true });
    const ledger = ledgerAfter(3, [[gone, 'interrupted']]);
    expect(await exportNeverRead(ledger)).toBeNull();
    ledger.close();
    rmSync(join(root, 'state'), { recursive: true });
    const empty = ledgerAfter(0, []);
    expect(await exportNeverRead(empty)).toBeNull();
    empty.close();
  });
});
