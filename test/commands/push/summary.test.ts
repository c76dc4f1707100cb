import { describe, expect, it } from 'vitest';
import { leftOverOf } from '../../../src/commands/push/left-over.js';
import { colorWanted } from '../../../src/output/output.js';
import { renderSummary, type PushSummary } from '../../../src/commands/push/summary.js';

const base: Omit<PushSummary, 'left'> = {
  result: 'finished',
  exitCode: 1,
  durationSeconds: 2,
  stateDir: '/tmp/s',
  accounts: { done: 5, invalid: 1 },
  items: { note: { done: 4, failed: 1 } },
  changedAfterImport: 1,
  recordsChangedAfterImport: { transaction: 2, note: 1 },
  topErrors: [{ code: 'invalid_phone_number', count: 1 }],
  accountsPerSecond: 2.5,
  accountsCreatedPerSecond: 2.5,
  rateShown: 'processed',
};
const summary: PushSummary = { ...base, left: leftOverOf(base) };

/** A summary of these counts, with what is left computed from them as buildPushSummary does. */
function summaryOf(exitCode: number, accounts: PushSummary['accounts'], items: PushSummary['items'] = {}): PushSummary {
  return {
    ...base,
    exitCode,
    accounts,
    items,
    left: leftOverOf({ accounts, items, changedAfterImport: 0, recordsChangedAfterImport: {} }),
  };
}

describe('summary', () => {
  it('shows counts per state, items, error codes and the changed-after-import warning, without colour when not wanted', () => {
    const text = renderSummary(summary, false);
    expect(text).not.toMatch(/\u001b\[/);
    expect(text).toMatch(/done\s+5/);
    expect(text).toMatch(/invalid \(held back\)\s+1/);
    expect(text).toMatch(/notes\s+4 done, 1 failed/);
    expect(text).toMatch(/invalid_phone_number\s+1/);
    expect(text).toContain('1 accounts changed in the export after they were imported');
    expect(text).toContain(
      '3 records changed in the export after they were sent (notes 1, transactions 2); the service cannot update ' +
        'them and keeps what was sent: they are not sent again (see the report: records.csv, changed_after_import).',
    );
  });

  it('after a stop while reading, says how many accounts of the export were never read, never only what was read', () => {
    const stopped = { ...summaryOf(130, { staged: 177 }), result: 'interrupted' as const, neverRead: 2072 };
    const text = renderSummary(stopped, false);
    expect(text).toContain(
      'push stopped: interrupted; left: 177 accounts not sent yet; about 2,072 accounts never read',
    );
    expect(text).toContain(
      'export: about 2,072 accounts never read (the run stopped while reading the export; the next push reads them)',
    );
  });

  it('says when accounts were only scheduled (--no-wait)', () => {
    expect(renderSummary(summaryOf(0, { scheduled: 3 }), false)).toContain(
      "push finished this run's work; left for later runs: 3 accounts wait for processing or their records (retry.csv)",
    );
    // --no-wait leaving accounts processing: exit 1 (not finished), and nothing for a person to do.
    expect(renderSummary({ ...summaryOf(1, { done: 1, scheduled: 3 }), topErrors: [] }, false)).toContain(
      "push finished this run's work, not the migration: 3 accounts wait for processing or their records " +
        '(retry.csv); the next push takes them up',
    );
    // ... but not while the ledger holds errors (a service that could not be reached for every create).
    expect(renderSummary(summaryOf(1, { staged: 3 }), false)).toContain('push finished, not everything is done');
    expect(renderSummary(summaryOf(0, { done: 3 }, { note: { done: 2 } }), false)).toContain(
      'push finished: everything done',
    );
  });

  it('never says done while anything is left: the headline names what and the report file that lists it', () => {
    const text = renderSummary(
      summaryOf(1, { done: 5, invalid: 3 }, { payment_instruction: { done: 4, unknown: 1 }, note: { failed: 2 } }),
      false,
    );
    expect(text).not.toContain('everything done');
    expect(text).toContain(
      'push finished, not everything is done: 3 accounts need data fixes (fix-data.csv); 2 records refused or invalid (fix-data.csv); 1 record of unknown outcome to check by hand (unknown-outcome.csv); see `migrate report`',
    );
    expect(renderSummary({ ...summaryOf(130, { done: 1, staged: 4 }), result: 'interrupted' }, false)).toContain(
      'push stopped: interrupted; left: 4 accounts not sent yet',
    );
  });

  it('shows the rate of the work the run did: creates with --no-wait, none when nothing moved', () => {
    expect(renderSummary(summary, false)).toContain('(2.0s, 2.5 accounts/s)');
    const noWait = { ...summaryOf(0, { scheduled: 3 }), accountsPerSecond: 0, rateShown: 'created' as const };
    expect(renderSummary(noWait, false)).toContain('(2.0s, 2.5 accounts created/s)');
    expect(renderSummary({ ...noWait, accountsCreatedPerSecond: 0 }, false)).toMatch(/\(2\.0s\)/);
    expect(renderSummary(noWait, false)).not.toContain('0.0 accounts/s');
  });

  it('honours NO_COLOR and non-terminals', () => {
    expect(colorWanted({ isTTY: true }, {})).toBe(true);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorWanted({ isTTY: false }, {})).toBe(false);
    expect(renderSummary(summary, true)).toMatch(/\u001b\[/);
  });
});
