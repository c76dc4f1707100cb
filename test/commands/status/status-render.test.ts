import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AccountStory } from '../../../src/commands/status/account-story.js';
import type { StatusSummary } from '../../../src/commands/status/status-gather.js';
import { renderAccountStory, renderStatus } from '../../../src/commands/status/status-render.js';
import { nextSteps, statusExit } from '../../../src/commands/status/status-verdict.js';

const ESC = '\u001b[';
const GOLDEN = join(import.meta.dirname, 'golden');

// Golden files: the whole text of `migrate status` on fixed ledgers. After a deliberate change
// of the layout, rewrite them with UPDATE_GOLDEN=1 and read the diff before committing it.
function golden(name: string, text: string): void {
  const path = join(GOLDEN, name);
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path, text);
  expect(text).toBe(readFileSync(path, 'utf8'));
}

function needsAttention(): StatusSummary {
  const summary: StatusSummary = {
    import_supplier: 'ACME',
    generated_at: '2026-11-22T03:00:00.000Z',
    sources: { ledger: true, service: true },
    counts: {
      ledger: { done: 5, errored: 2, invalid: 3, scheduled: 1 },
      service: { all: 8, imported: 5, pending: 3, status_checked: 2, status_not_checked: 1, errored: 2 },
      errored: 2,
      only_in_ledger: 0,
      only_on_service: 3,
      differs: 0,
      items_outstanding: { note: { pending: 2 }, payment_instruction: { failed: 1, held: 1 } },
      items_done: { note: 7, transaction: 12, payment_instruction: 4 },
    },
    errored: [{ external_account_number: 'ERR-1', code: 'account_creation_failed', detail: 'could not\nbe created' }],
    pending_on_service: ['P-1'],
    only_in_ledger: [],
    only_on_service: [{ external_account_number: 'X-1', platform_account_number: 'A-00000001' }],
    differs: [],
    items_outstanding: [
      {
        external_account_number: 'D-1',
        record: 'payment_instruction',
        state: 'failed',
        account_state: 'done',
        held_by: 'failed: refused by the service',
        code: 'payment_vendor_failed',
        file: 'payment_instructions.csv',
        line: 3,
      },
      {
        external_account_number: 'ERR-1',
        record: 'note',
        state: 'pending',
        account_state: 'errored',
        held_by: 'waiting: account ERRORED',
        code: null,
        file: 'notes.csv',
        line: 10,
      },
    ],
    top_error_codes: [
      { code: 'invalid_postcode', count: 3 },
      { code: 'account_creation_failed', count: 2 },
      { code: 'payment_vendor_failed', count: 1 },
    ],
    push_plan: { accounts: { done: 5, errored: 2, invalid: 3, wait: 1 }, records: { errored: 1, wait: 1 } },
    held_for_configuration: {},
    changed_after_import: null,
    open_period: null,
    last_push: null,
    export: null,
    next_steps: [],
  };
  summary.next_steps = nextSteps(summary);
  return summary;
}

function allDone(): StatusSummary {
  const summary: StatusSummary = {
    ...needsAttention(),
    counts: {
      ledger: { done: 8 },
      service: { all: 8, imported: 8, pending: 0, status_checked: 0, status_not_checked: 0, errored: 0 },
      errored: 0,
      only_in_ledger: 0,
      only_on_service: 0,
      differs: 0,
      items_outstanding: {},
      items_done: { note: 9, transaction: 12, statement: 3, payment_instruction: 6 },
    },
    errored: [],
    pending_on_service: [],
    only_on_service: [],
    items_outstanding: [],
    top_error_codes: [],
    push_plan: { accounts: { done: 8 }, records: {} },
  };
  summary.next_steps = nextSteps(summary);
  return summary;
}

describe('status text', () => {
  it('plain (a pipe, or NO_COLOR): aligned sections, records named by what holds them, the next step first', () => {
    const text = renderStatus(needsAttention(), { color: false });
    expect(text).not.toContain(ESC);
    golden('needs-attention.txt', text);
    const lines = text.trimEnd().split('\n');
    const next = lines.findIndex((line) => line.startsWith('next: '));
    expect(lines[next]).toBe(
      'next: 3 accounts and 1 record need data fixes: migrate report --out DIR (fix-data.csv), fix the export, then ' +
        'migrate push EXPORT_DIR',
    );
    // Read top down: the next step, then the others in order, each below it.
    expect(lines.slice(next + 1).every((line) => line.startsWith('then: '))).toBe(true);
    expect(lines.slice(next + 1)).toHaveLength(3);
    expect(text).toMatch(/ERR-1 {2}note {17}waiting: account ERRORED {8}- {22}notes\.csv:10/);
    expect(text).not.toMatch(/^pending /m);
    expect(text).toContain('... and 2 more: migrate status ACME --json, or --max-rows 3');
  });

  it('coloured on a terminal, with the same text once the colour is taken out', () => {
    const coloured = renderStatus(needsAttention(), { color: true });
    expect(coloured).toContain(ESC);
    golden('needs-attention.color.txt', coloured);
    expect(coloured.replace(/\u001b\[[0-9;]*m/g, '')).toBe(renderStatus(needsAttention(), { color: false }));
  });

  it('all done: nothing left, exit 0', () => {
    const summary = allDone();
    golden('all-done.txt', renderStatus(summary, { color: false }));
    expect(summary.next_steps).toEqual(['all 8 accounts done: nothing left to do']);
    expect(statusExit(summary)).toBe(0);
  });

  it('every account of the ledger done, but a push stopped while reading the export: not done, exit 1', () => {
    const done = allDone();
    const summary: StatusSummary = { ...done, export: { dir: '/srv/export', accounts: 2348, never_read: 2340 } };
    summary.next_steps = nextSteps(summary);
    expect(summary.next_steps).toEqual([
      'not finished: the next migrate push EXPORT_DIR reads about 2,340 accounts never read',
    ]);
    expect(statusExit(summary)).toBe(1);
    expect(renderStatus(summary, { color: false })).toContain(
      '  export: about 2,340 accounts never read of about 2,348 in /srv/export (the last push stopped while reading ' +
        'the export; the next push reads them)',
    );
  });

  it('exit 5 and the next steps, most urgent first', () => {
    const summary = needsAttention();
    expect(statusExit(summary)).toBe(5);
    expect(summary.next_steps.map((step) => step.split(':')[0])).toEqual([
      '3 accounts and 1 record need data fixes',
      '2 accounts ERRORED on the platform (1 record waits for them)',
      '1 record refused by the service',
      'not finished',
    ]);
    expect(summary.next_steps[3]).toBe(
      'not finished: the next migrate push EXPORT_DIR checks 1 account waiting for processing on the service (a ' +
        'push waits for them, --no-wait not), and sends 1 record once their account is imported',
    );
    const errored = allDone();
    errored.counts.errored = 1;
    expect(nextSteps(errored)[0]).toBe(
      '1 account ERRORED on the platform: check them (migrate status ACME --account NUMBER), then migrate push EXPORT_DIR --retry-errored',
    );
    expect(statusExit(errored)).toBe(5);
  });

  it('an account unknown under this supplier names the supplier the ledger has it under', () => {
    const story: AccountStory = {
      import_supplier: 'ACME',
      external_account_number: 'N-1',
      ledger: null,
      service: { v2: null, v1: null },
      other_suppliers: ['NORTH'],
    };
    const text = renderAccountStory(story, { color: false });
    expect(text).toContain('ledger: not in this ledger\n  the ledger has it under import supplier NORTH');
    expect(text).toContain('service v2: no import process');
    expect(text).toContain('service v1: no account');
  });
});
