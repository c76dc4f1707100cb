import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../../src/engine/events.js';
import { createNdjsonLogSink, logLineOf, stepOf } from '../../../src/commands/push/ndjson-log.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ndjson-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lines = (path: string): Array<Record<string, unknown>> =>
  readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const clock = () => new Date('2026-11-22T03:00:00.000Z');

describe('the NDJSON log sink', () => {
  it('writes one line per event with time, run, account, step and outcome, in order', () => {
    const path = join(dir, 'run.ndjson');
    const sink = createNdjsonLogSink(path, {
      runId: 7,
      now: clock,
      accountNumberOf: (id) => (id === 9 ? 'FROM-LEDGER' : undefined),
    });
    const events: EngineEvent[] = [
      {
        type: 'plan',
        toCreate: 2,
        toProcess: 2,
        items: { note: 1, transaction: 0, statement: 0, payment_instruction: 0 },
      },
      { type: 'account', accountId: 1, externalAccountNumber: 'A-1', from: 'staged', to: 'creating' },
      { type: 'account', accountId: 1, externalAccountNumber: 'A-1', from: 'creating', to: 'scheduled' },
      {
        type: 'account',
        accountId: 1,
        externalAccountNumber: 'A-1',
        from: 'scheduled',
        to: 'errored',
        code: 'account_creation_failed',
      },
      { type: 'items', accountId: 1, kind: 'note', done: 1, failed: 0, unknown: 0 },
      { type: 'items', accountId: 9, kind: 'payment_instruction', done: 0, failed: 0, unknown: 1 },
      { type: 'retrying', code: 'rate_limited' },
      { type: 'stopping', reason: 'fatal', detail: 'authentication failed: token eyJhbGciOi.secret' },
    ];
    events.forEach((event) => sink.emit(event));
    sink.close({ outcome: 'fatal', exitCode: 3 });
    sink.close();
    const written = lines(path);
    expect(written).toHaveLength(events.length + 2);
    expect(written.at(-1)).toMatchObject({ event: 'log_closed', outcome: 'fatal', exit_code: 3 });
    expect(written.every((line) => line['time'] === '2026-11-22T03:00:00.000Z' && line['run'] === 7)).toBe(true);
    expect(
      written
        .slice(1, -1)
        .map((line) => [
          line['event'],
          line['account'] ?? null,
          line['step'] ?? null,
          line['outcome'] ?? null,
          line['code'] ?? null,
        ]),
    ).toEqual([
      ['plan', null, null, null, null],
      ['account', 'A-1', 'create', 'creating', null],
      ['account', 'A-1', 'create', 'scheduled', null],
      ['account', 'A-1', 'poll', 'errored', 'account_creation_failed'],
      ['items', 'A-1', 'note', 'done', null],
      ['items', 'FROM-LEDGER', 'payment_instruction', 'unknown', null],
      ['retrying', null, null, null, 'rate_limited'],
      ['stopping', null, null, 'fatal', null],
    ]);
    // A stop's free-text detail can quote the service or a credential: never written.
    expect(readFileSync(path, 'utf8')).not.toContain('eyJ');
  });

  it('creates the file 0600, tightens an existing one, and appends (runs told apart by run id)', () => {
    const path = join(dir, 'shared.ndjson');
    writeFileSync(path, '', { mode: 0o644 });
    const first = createNdjsonLogSink(path, { runId: 1 });
    first.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const second = createNdjsonLogSink(path, { runId: 2 });
    second.emit({ type: 'retrying', code: 'server_error' });
    second.close();
    expect(lines(path).map((line) => `${line['run']} ${line['event']}`)).toEqual([
      '1 log_opened',
      '1 log_closed',
      '2 log_opened',
      '2 retrying',
      '2 log_closed',
    ]);
  });

  it('writes lines of one turn together, soon after, without waiting for close', async () => {
    const path = join(dir, 'soon.ndjson');
    const sink = createNdjsonLogSink(path, { runId: 3 });
    sink.emit({ type: 'retrying', code: 'server_error' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines(path)).toHaveLength(2);
    sink.close();
  });

  it('refuses a path it cannot open with a message naming the flag and the path', () => {
    expect(() => createNdjsonLogSink(join(dir, 'missing', 'x.ndjson'), { runId: 1 })).toThrow(
      /--log-file .*missing.*ENOENT/,
    );
  });

  it('writes only chosen fields: an event carrying extra data (a payload, a name) leaks nothing', () => {
    const event = {
      type: 'account',
      accountId: 1,
      externalAccountNumber: 'A-1',
      from: 'staged',
      to: 'invalid',
      code: 'invalid_email',
      payload: { billing_name: 'Ada Lovelace' },
    } as unknown as EngineEvent;
    expect(JSON.stringify(logLineOf(event, () => undefined))).not.toContain('Ada');
  });

  it('names the step of each state change of the state machine', () => {
    expect(stepOf('staged', 'creating')).toBe('create');
    expect(stepOf('creating', 'processed')).toBe('create');
    expect(stepOf('creating', 'staged')).toBe('reconcile');
    expect(stepOf('scheduled', 'processed')).toBe('poll');
    expect(stepOf('unresolved', 'processed')).toBe('resolve');
    expect(stepOf('processed', 'done')).toBe('post_import');
    expect(stepOf('errored', 'staged')).toBe('retry');
  });
});
