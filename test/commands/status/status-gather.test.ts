import { afterEach, describe, expect, it } from 'vitest';
import { gatherStatus } from '../../../src/commands/status/status-gather.js';
import type { StatusRow } from '../../../src/commands/status/status-join.js';
import { account, startHarness, type Harness } from '../../api/helpers/sandbox-client.js';

// The service side of `migrate status` over real HTTP: both lists read whole as they arrive into the compact index,
// counted completely, and the accounts only the service knows given in list order.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('gatherStatus without a ledger', () => {
  it('counts every listed process and gives each one row, in list order, pending ones marked', async () => {
    harness = await startHarness({ processingMs: 60_000 });
    const seeded = 20_000;
    harness.sandbox.control.seedImported(
      'ACME',
      Array.from({ length: seeded }, (_, n) => `S-${n}`),
    );
    await harness.client.createAccount(account('P-1'));
    await harness.client.createAccount(account('P-2'));
    const rows: StatusRow[] = [];
    const summary = await gatherStatus({
      supplier: 'ACME',
      ledger: undefined,
      client: harness.client,
      maxStatusChecks: 1,
      maxListed: 3,
      onRow: (row) => rows.push(row),
    });
    expect(summary.counts.service).toEqual({
      all: seeded + 2,
      imported: seeded,
      pending: 2,
      status_checked: 1,
      status_not_checked: 1,
      errored: 0,
    });
    expect(rows).toHaveLength(seeded + 2);
    expect(rows.slice(-2).map((row) => [row.external_account_number, row.service, row.service_status])).toEqual([
      ['P-1', 'pending', 'PENDING'],
      ['P-2', 'pending', null],
    ]);
    const sample = rows[12_345];
    expect(sample).toMatchObject({
      external_account_number: 'S-12345',
      service: 'imported',
      mismatch: 'only_on_service',
      platform_account_number: harness.sandbox.inspect.account('ACME', 'S-12345')?.platformAccountNumber,
    });
    expect(summary.counts.only_on_service).toBe(seeded + 2);
    expect(summary.only_on_service.map((entry) => entry.external_account_number)).toEqual(['S-0', 'S-1', 'S-2']);
    expect(summary.pending_on_service).toEqual(['P-1', 'P-2']);
  });
});
