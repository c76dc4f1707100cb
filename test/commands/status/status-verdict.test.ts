import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, type AccountState, type ErrorInfo, type ItemKind, type ItemState } from '../../../src/ledger/index.js';
import { openLedgerSource } from '../../../src/commands/common/ledger-source.js';
import { gatherStatus } from '../../../src/commands/status/status-gather.js';
import { renderStatus } from '../../../src/commands/status/status-render.js';
import { nextSteps, statusExit } from '../../../src/commands/status/status-verdict.js';

// The advice of `migrate status` for every account and record state: a real ledger read offline, planned by the
// push's own plan (engine/plan.ts), so each line says what a push would actually do, or what a person must.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'status-verdict-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Row {
  state: AccountState;
  error?: ErrorInfo;
  items?: Array<[ItemKind, ItemState]>;
}

/** A ledger of these ACME accounts (A-0, A-1, ...) and records, and what `status ACME --offline` advises on it. */
async function adviceOn(rows: Row[], lastPush?: { fatal: { code: string; detail: string } }) {
  const ledger = Ledger.open(dir);
  const runId = ledger.startRun('push', {});
  ledger.batch(() =>
    rows.forEach((row, n) => {
      const id = ledger.insertAccount(
        {
          importSupplier: 'ACME',
          externalAccountNumber: `A-${n}`,
          state: row.state,
          payload: '{}',
          fingerprint: 'f',
          originFile: 'accounts.csv',
          originLine: n + 2,
          origins: null,
        },
        { step: 'stage' },
      );
      if (row.error) ledger.updateAccountNow(id, { error: row.error });
      (row.items ?? []).forEach(([kind, state], index) =>
        ledger.insertItem({
          accountId: id,
          kind,
          naturalKey: `${kind}-${index}`,
          body: '{}',
          fingerprint: 'f',
          state,
          originFile: 'notes.csv',
          originLine: index + 2,
        }),
      );
    }),
  );
  ledger.finishRun(runId, lastPush ? 'fatal' : 'finished', lastPush ? 3 : 1, { ...lastPush });
  ledger.close();
  const source = openLedgerSource(dir);
  try {
    const summary = await gatherStatus({
      supplier: 'ACME',
      ledger: source,
      client: undefined,
      maxStatusChecks: 0,
      maxListed: 20,
    });
    summary.next_steps = nextSteps(summary);
    return { steps: summary.next_steps, exit: statusExit(summary), text: renderStatus(summary, { color: false }) };
  } finally {
    source.close();
  }
}

const PUSH = 'not finished: the next migrate push EXPORT_DIR';
const DATA_FIX = 'migrate report --out DIR (fix-data.csv), fix the export, then migrate push EXPORT_DIR';

describe('status advice, per account state', () => {
  it.each<[string, Row, string]>([
    [
      'staged (not sent yet), with records',
      { state: 'staged', items: [['note', 'pending']] },
      `${PUSH} creates 1 account not sent yet, and sends 1 record once their account is imported`,
    ],
    [
      'creating (create unconfirmed)',
      { state: 'creating' },
      `${PUSH} asks the service about 1 create left unconfirmed (resent only if it never arrived)`,
    ],
    [
      'scheduled (waiting for processing)',
      {
        state: 'scheduled',
        items: [
          ['transaction', 'pending'],
          ['statement', 'pending'],
        ],
      },
      `${PUSH} checks 1 account waiting for processing on the service (a push waits for them, --no-wait not), and ` +
        'sends 2 records once their account is imported',
    ],
    [
      'processed (imported, records left; one sent without a recorded answer)',
      {
        state: 'processed',
        items: [
          ['note', 'pending'],
          ['payment_instruction', 'sending'],
        ],
      },
      `${PUSH} finishes 1 imported account, and sends 2 records`,
    ],
    [
      'unresolved (known only by records)',
      { state: 'unresolved', items: [['note', 'pending']] },
      `${PUSH} looks up 1 account known only by records (not in the export), and sends 1 record once their ` +
        'account is imported',
    ],
    [
      'invalid (its data), with records waiting for it',
      { state: 'invalid', error: { code: 'invalid_email', detail: 'x' }, items: [['note', 'pending']] },
      `1 account needs data fixes (1 record waits for them): ${DATA_FIX}`,
    ],
    [
      'invalid, held back by an earlier version for the service configuration',
      { state: 'invalid', error: { code: 'invalid_import_supplier', detail: 'x', attr: 'import_supplier' } },
      "1 account held back as invalid by an earlier version for the service's configuration (invalid_import_supplier), " +
        'not for their data: once the configuration is right, migrate push EXPORT_DIR --retry-invalid ' +
        'invalid_import_supplier',
    ],
    [
      'errored, with records waiting for it',
      {
        state: 'errored',
        items: [
          ['note', 'pending'],
          ['note', 'pending'],
        ],
      },
      '1 account ERRORED on the platform (2 records wait for them): check them (migrate status ACME --account ' +
        'NUMBER), then migrate push EXPORT_DIR --retry-errored',
    ],
    ['done', { state: 'done', items: [['note', 'done']] }, 'all 1 account done: nothing left to do'],
  ])('%s', async (_name, row, advice) => {
    const { steps, exit, text } = await adviceOn([row]);
    expect(steps).toEqual([advice]);
    // 5 where a person must act (README "Exit codes"), 1 where the next push goes on by itself.
    expect(exit).toBe(row.state === 'done' ? 0 : row.state === 'invalid' || row.state === 'errored' ? 5 : 1);
    // The next step is read first: `next:` above any `then:`.
    expect(text.trimEnd().split('\n').at(-1)).toBe(`next: ${advice}`);
  });

  it('records behind ERRORED or invalid accounts are not counted as what a push sends', async () => {
    const { steps } = await adviceOn([
      { state: 'errored', items: [['note', 'pending']] },
      { state: 'invalid', error: { code: 'invalid_email', detail: 'x' }, items: [['note', 'pending']] },
      { state: 'processed', items: [['note', 'pending']] },
    ]);
    expect(steps).toEqual([
      `1 account needs data fixes (1 record waits for them): ${DATA_FIX}`,
      expect.stringMatching(/^1 account ERRORED on the platform \(1 record waits for them\)/),
      `${PUSH} finishes 1 imported account, and sends 1 record`,
    ]);
  });
});

describe('status exit code: 5 where something waits and something needs a person, 1 where a later push will do', () => {
  it.each<[string, Row[], number]>([
    ['waiting and not sent yet', [{ state: 'scheduled' }, { state: 'staged' }], 1],
    ['waiting and ERRORED', [{ state: 'scheduled' }, { state: 'errored' }], 5],
    ['not sent yet and a refused record', [{ state: 'staged' }, { state: 'done', items: [['note', 'failed']] }], 5],
  ])('%s -> %i', async (_name, rows, code) => {
    expect((await adviceOn(rows)).exit).toBe(code);
  });
});

describe('status advice, per record state', () => {
  it.each<[ItemState, string]>([
    ['held', `1 record needs data fixes: ${DATA_FIX}`],
    [
      'failed',
      '1 record refused by the service: migrate report --out DIR (fix-data.csv), fix the export, then migrate push ' +
        'EXPORT_DIR (a refused record is sent again once its data changes)',
    ],
    [
      'unknown',
      '1 record of unknown outcome: check them on the platform and add the missing ones by hand (migrate report ' +
        '--out DIR: unknown-outcome.csv); a push never resends them',
    ],
  ])('%s', async (state, advice) => {
    const { steps, exit } = await adviceOn([
      {
        state: 'done',
        items: [
          ['note', 'done'],
          ['note', state],
        ],
      },
    ]);
    expect(steps).toEqual([advice]);
    expect(exit).toBe(5);
  });
});

describe('status advice after a push that stopped', () => {
  it('names why first (what to fix), then what the next push does; next: above then:', async () => {
    const fatal = {
      code: 'configuration_refused',
      detail: "the service refused the run's configuration ... To fix: x",
    };
    const { steps, text } = await adviceOn([{ state: 'staged' }, { state: 'done' }], { fatal });
    expect(steps[0]).toMatch(
      /^the last push \(run 1, \S+\) stopped: configuration_refused: the service refused the run's configuration/,
    );
    expect(steps[1]).toBe(`${PUSH} creates 1 account not sent yet`);
    const lines = text.trimEnd().split('\n');
    expect(lines.at(-2)).toBe(`next: ${steps[0]}`);
    expect(lines.at(-1)).toBe(`then: ${steps[1]}`);
  });

  it('says nothing of it once every account is done', async () => {
    const { steps, exit } = await adviceOn([{ state: 'done' }], {
      fatal: { code: 'service_unreachable', detail: 'x' },
    });
    expect(steps).toEqual(['all 1 account done: nothing left to do']);
    expect(exit).toBe(0);
  });
});
