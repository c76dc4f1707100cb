import { describe, expect, it } from 'vitest';
import type { AccountStory } from '../../src/report/account-story.js';
import type { StatusSummary } from '../../src/report/status-gather.js';
import { renderAccountStory, renderStatus } from '../../src/report/status-render.js';

const ESC = '\u001b[';

function summary(): StatusSummary {
  return {
    import_supplier: 'ACME',
    generated_at: '2026-11-22T03:00:00.000Z',
    sources: { ledger: true, service: true },
    counts: {
      ledger: { done: 5, errored: 2, invalid: 1 },
      service: { all: 8, imported: 5, pending: 3, status_checked: 2, status_not_checked: 1, errored: 2 },
      errored: 2,
      only_in_ledger: 0,
      only_on_service: 3,
      differs: 0,
      items_outstanding: { note: { pending: 2 }, payment_instruction: { failed: 1 } },
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
        code: 'payment_vendor_failed',
        file: 'payment_instructions.csv',
        line: 3,
      },
    ],
  };
}

describe('status output', () => {
  it('plain lines: one record per line, and how many each cut list left out', () => {
    const text = renderStatus(summary(), { table: false, color: false });
    expect(text).not.toContain(ESC);
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        'ledger done=5 errored=2 invalid=1',
        'service all=8 imported=5 pending=3 status_checked=2 status_not_checked=1 errored=2',
        'errored ERR-1 account_creation_failed could not be created',
        'pending P-1',
        'only_on_service X-1 A-00000001',
        'item D-1 payment_instruction failed payment_vendor_failed payment_instructions.csv:3',
        'more errored 1',
        'more only_on_service 2',
        'more item 2',
      ]),
    );
  });

  it('a table on a terminal: coloured, or not when NO_COLOR asked for none', () => {
    const coloured = renderStatus(summary(), { table: true, color: true });
    expect(coloured).toContain(ESC);
    const plain = renderStatus(summary(), { table: true, color: false });
    expect(plain).not.toContain(ESC);
    expect(plain).toMatch(/ERRORED on the platform +2/);
    expect(plain).toMatch(/only on the service +3/);
    expect(plain).toContain('1 open accounts not asked (--max-status-checks)');
    expect(plain).toContain('... and 2 more (--max-rows, --json, or migrate report)');
  });

  it('an account unknown under this supplier names the supplier the ledger has it under', () => {
    const story: AccountStory = {
      import_supplier: 'ACME',
      external_account_number: 'N-1',
      ledger: null,
      service: { v2: null, v1: null },
      other_suppliers: ['NORTH'],
    };
    const text = renderAccountStory(story, { table: false, color: false });
    expect(text).toContain('ledger: not in this ledger\n  the ledger has it under import supplier NORTH');
    expect(text).toContain('service v2: no import process');
    expect(text).toContain('service v1: no account');
  });
});
