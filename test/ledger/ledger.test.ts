import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  acquireLock,
  canonicalJson,
  fingerprintOf,
  Ledger,
  LEDGER_FILE,
  LEDGER_SCHEMA_VERSION,
  LedgerDamagedError,
  LedgerLockedError,
  LOCK_FILE,
  openCampaignReader,
  openLedgerReader,
} from '../../src/ledger/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const newAccount = (n: number, state: 'staged' | 'invalid' = 'staged') => ({
  importSupplier: 'ACME',
  externalAccountNumber: `A-${n}`,
  state,
  payload: '{}',
  fingerprint: 'f',
  originFile: 'accounts.csv',
  originLine: n + 1,
  origins: null,
});

describe('opening a ledger', () => {
  it('creates a 0700 state directory and 0600 database files, with WAL and the current schema version', () => {
    const state = join(dir, 'state');
    const ledger = Ledger.open(state);
    ledger.batch(() => ledger.insertAccount(newAccount(1), { step: 'stage' }));
    expect(statSync(state).mode & 0o777).toBe(0o700);
    expect(statSync(join(state, LEDGER_FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(join(state, `${LEDGER_FILE}-wal`)).mode & 0o777).toBe(0o600);
    expect(ledger.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(ledger.db.pragma('synchronous', { simple: true })).toBe(1);
    expect(ledger.db.pragma('user_version', { simple: true })).toBe(LEDGER_SCHEMA_VERSION);
    ledger.close();
  });

  it('tightens a state directory readable by others', () => {
    mkdirSync(join(dir, 'loose'), { mode: 0o755 });
    Ledger.open(join(dir, 'loose')).close();
    expect(statSync(join(dir, 'loose')).mode & 0o777).toBe(0o700);
  });

  it('refuses a ledger written by a newer migrate', () => {
    const file = join(dir, LEDGER_FILE);
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => Ledger.open(dir)).toThrow(/newer than this migrate/);
  });

  it('migration 3 adds settled_by and backfills it from the answers of items done before', () => {
    const ledger = Ledger.open(dir);
    const id = ledger.batch(() => ledger.insertAccount(newAccount(1), { step: 'stage' }));
    const item = (kind: 'note' | 'payment_instruction', key: string, result: string) =>
      ledger.batch(() => {
        const itemId = ledger.insertItem({
          accountId: id,
          kind,
          naturalKey: key,
          body: '{}',
          fingerprint: 'f',
          state: 'pending',
          originFile: null,
          originLine: null,
        });
        ledger.updateItemsNow([itemId], { state: 'done', result });
      });
    item('note', 'n1', 'NOTE_ALREADY_EXISTS');
    item('note', 'n2', 'NOTE_CREATION_SUCCESS');
    item('payment_instruction', 'pm', 'A-1234ABCD');
    // As a ledger of schema 2 was.
    ledger.db.exec('ALTER TABLE items DROP COLUMN settled_by; DROP INDEX accounts_by_number');
    ledger.db.pragma('user_version = 2');
    ledger.close();
    const again = Ledger.open(dir);
    expect(again.read.items(id).map((row) => [row.naturalKey, row.settledBy])).toEqual([
      ['n1', 'already_exists'],
      ['n2', 'created'],
      ['pm', 'created'],
    ]);
    again.close();
  });

  it('migration 7 stages again accounts the service refused for missing customers or supply addresses', () => {
    const ledger = Ledger.open(dir);
    const refused = (n: number, issues: Array<{ code: string; attr: string; source: 'local' | 'service' }>) =>
      ledger.batch(() => {
        const id = ledger.insertAccount(newAccount(n, 'invalid'), { step: 'stage' });
        ledger.replaceIssues(
          id,
          issues.map((issue) => ({ ...issue, message: `${issue.attr}: ${issue.code}` })),
        );
        const first = issues[0];
        if (first) ledger.updateAccountNow(id, { error: { code: first.code, detail: 'x', attr: first.attr } });
        return id;
      });
    const customers = refused(1, [{ code: 'required', attr: 'customers', source: 'service' }]);
    const both = refused(2, [
      { code: 'required', attr: 'supply_addresses', source: 'service' },
      { code: 'required', attr: 'customers', source: 'service' },
    ]);
    refused(3, [{ code: 'invalid_email', attr: 'billing_email', source: 'service' }]);
    refused(4, [{ code: 'required', attr: 'customers', source: 'local' }]);
    // As a ledger of schema 6 was.
    ledger.db.pragma('user_version = 6');
    ledger.close();
    const again = Ledger.open(dir);
    const row = (n: number) => again.read.account('ACME', `A-${n}`);
    expect([1, 2, 3, 4].map((n) => row(n)?.state)).toEqual(['staged', 'staged', 'invalid', 'invalid']);
    expect(row(1)?.error).toBeNull();
    expect(again.read.issues(both)).toEqual([]);
    expect(again.read.issues(row(3)?.id ?? 0)).toHaveLength(1);
    expect(again.read.history(customers).at(-1)).toMatchObject({
      step: 'release',
      fromState: 'invalid',
      toState: 'staged',
    });
    again.close();
  });

  it('names a damaged ledger file (exit 3), with what to do, instead of a SQLite error', () => {
    writeFileSync(join(dir, LEDGER_FILE), Buffer.alloc(4096, 0x41));
    let thrown: unknown;
    try {
      Ledger.open(dir);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LedgerDamagedError);
    expect((thrown as LedgerDamagedError).exitCode).toBe(3);
    expect((thrown as Error).message).toContain(
      `the ledger ${join(dir, LEDGER_FILE)} is damaged (file is not a database)`,
    );
    expect((thrown as Error).message).toContain('No snapshot exists');
    expect(() => openLedgerReader(dir)).toThrow(LedgerDamagedError);
  });

  it('records the dialect once; a ledger with runs from before the settings table was pushed in the spec dialect', () => {
    const fresh = Ledger.open(join(dir, 'fresh'));
    expect(fresh.read.dialect()).toBeUndefined();
    fresh.recordDialect('kraken');
    fresh.recordDialect('spec');
    expect(fresh.read.dialect()).toBe('kraken');
    fresh.close();
    const old = new Database(join(dir, LEDGER_FILE));
    old.exec(`CREATE TABLE runs (id INTEGER PRIMARY KEY, command TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT,
      status TEXT NOT NULL, exit_code INTEGER, options TEXT NOT NULL, counts TEXT);
      INSERT INTO runs (command, started_at, status, options) VALUES ('push', '2024-01-01', 'finished', '{}');
      CREATE TABLE items (id INTEGER PRIMARY KEY, account_id INTEGER, state TEXT NOT NULL, result TEXT,
        changed_fingerprint TEXT);
      CREATE TABLE accounts (id INTEGER PRIMARY KEY, external_account_number TEXT NOT NULL, state TEXT NOT NULL,
        error_code TEXT, error_detail TEXT, error_attr TEXT, error_file TEXT, error_line INTEGER, error_column TEXT,
        updated_at TEXT NOT NULL, changed_fingerprint TEXT);
      CREATE TABLE account_issues (account_id INTEGER NOT NULL, code TEXT NOT NULL, attr TEXT, source TEXT NOT NULL);
      CREATE TABLE events (id INTEGER PRIMARY KEY, run_id INTEGER, account_id INTEGER NOT NULL, at TEXT NOT NULL,
        step TEXT NOT NULL, from_state TEXT, to_state TEXT, detail TEXT);`);
    old.pragma('user_version = 1');
    old.close();
    const migrated = Ledger.open(dir);
    expect(migrated.read.dialect()).toBe('spec');
    migrated.close();
  });

  it('records the service it is used with; a ledger from before that gets a note for the first push to record its own', () => {
    const fresh = Ledger.open(join(dir, 'fresh'));
    expect(fresh.read.service()).toBeUndefined();
    fresh.recordService({ url: 'https://one.example', dialect: 'spec', importSupplier: 'ACME' });
    expect(fresh.read.service()).toEqual({ url: 'https://one.example', dialect: 'spec', importSupplier: 'ACME' });
    fresh.recordService(
      { url: 'https://two.example', dialect: 'kraken' },
      { from: { url: 'https://one.example', dialect: 'spec', importSupplier: 'ACME' }, runId: 7 },
    );
    expect(fresh.read.service()).toMatchObject({ url: 'https://two.example', dialect: 'kraken' });
    expect(fresh.read.service()?.importSupplier).toBeUndefined();
    expect(fresh.read.service()?.note).toMatch(
      /^moved by run 7 at \S+ from https:\/\/one\.example \(spec dialect, import supplier ACME\)$/,
    );
    fresh.close();
    // A ledger of schema 5 with two runs: migration 6 leaves the note; the service is unknown until a push records it.
    const old = Ledger.open(dir);
    old.startRun('push', {});
    old.startRun('push', {});
    old.recordDialect('spec');
    old.db.exec(`DELETE FROM settings WHERE key = 'service_note'`);
    old.db.pragma('user_version = 5');
    old.close();
    const migrated = Ledger.open(dir);
    expect(migrated.read.service()).toBeUndefined();
    migrated.recordService({ url: 'https://one.example', dialect: 'spec' });
    expect(migrated.read.service()).toEqual({
      url: 'https://one.example',
      dialect: 'spec',
      note: 'recorded by the first push after runs 1-2, whose service was not recorded',
    });
    migrated.close();
  });

  it('keeps data across reopen and migrates once', () => {
    const ledger = Ledger.open(dir);
    ledger.batch(() => ledger.insertAccount(newAccount(1), { step: 'stage' }));
    ledger.close();
    const again = Ledger.open(dir);
    expect(again.findAccount('ACME', 'A-1')?.state).toBe('staged');
    again.close();
  });
});

describe('writes and reads', () => {
  it('group-commits queued updates in order, records history, and pages by id', async () => {
    const ledger = Ledger.open(dir);
    ledger.startRun('push', { concurrency: 8 });
    const ids = ledger.batch(() =>
      Array.from({ length: 10 }, (_, n) => ledger.insertAccount(newAccount(n), { step: 'stage' })),
    );
    const id = ids[0] ?? 0;
    await Promise.all([
      ledger.updateAccount(
        id,
        { state: 'creating', addAttempt: true },
        { step: 'create', from: 'staged', detail: 'intent' },
      ),
      ledger.updateAccount(id, { state: 'scheduled', nextCheckAt: 5 }, { step: 'create', from: 'creating' }),
    ]);
    const row = ledger.accountById(id);
    expect(row).toMatchObject({ state: 'scheduled', attempts: 1, nextCheckAt: 5 });
    expect(ledger.read.history(id).map((event) => [event.step, event.fromState, event.toState])).toEqual([
      ['stage', null, 'staged'],
      ['create', 'staged', 'creating'],
      ['create', 'creating', 'scheduled'],
    ]);
    const first = ledger.pageAccounts(['staged'], undefined, 4);
    expect(first.map((account) => account.externalAccountNumber)).toEqual(['A-1', 'A-2', 'A-3', 'A-4']);
    const last = first.at(-1);
    const second = ledger.pageAccounts(['staged'], last && { number: last.externalAccountNumber, id: last.id }, 100);
    expect(second).toHaveLength(5);
    expect(ledger.dueChecks(4, 10)).toHaveLength(0);
    expect(ledger.dueChecks(5, 10).map((account) => account.id)).toEqual([id]);
    ledger.close();
  });

  it('stores errors with their origin and counts them', async () => {
    const ledger = Ledger.open(dir);
    const id = ledger.batch(() => ledger.insertAccount(newAccount(1, 'invalid'), { step: 'stage' }));
    const itemId = ledger.batch(() =>
      ledger.insertItem({
        accountId: id,
        kind: 'note',
        naturalKey: 'k',
        body: '{}',
        fingerprint: 'x',
        state: 'pending',
        originFile: 'notes.csv',
        originLine: 3,
      }),
    );
    await ledger.updateAccount(id, {
      error: {
        code: 'invalid_phone_number',
        detail: 'bad',
        attr: 'customers.0.mobile',
        file: 'customers.csv',
        line: 4,
        column: 'mobile',
      },
    });
    await ledger.updateItems(
      [itemId],
      { state: 'failed', error: { code: 'x', detail: 'y', file: 'notes.csv', line: 3 } },
      { accountId: id, step: 'note' },
    );
    expect(ledger.accountById(id)?.error).toEqual({
      code: 'invalid_phone_number',
      detail: 'bad',
      attr: 'customers.0.mobile',
      file: 'customers.csv',
      line: 4,
      column: 'mobile',
    });
    expect(ledger.read.counts()).toEqual({
      accounts: { invalid: 1 },
      items: { note: { failed: 1 } },
      changedAfterImport: 0,
      recordsChangedAfterImport: {},
    });
    expect(ledger.read.topErrorCodes()).toEqual([
      { code: 'invalid_phone_number', count: 1 },
      { code: 'x', count: 1 },
    ]);
    ledger.close();
  });

  it("never counts the run's own stop (aborted) among the most frequent errors", async () => {
    const ledger = Ledger.open(dir);
    const [stopped, refused] = ledger.batch(() => [
      ledger.insertAccount(newAccount(1, 'staged'), { step: 'stage' }),
      ledger.insertAccount(newAccount(2, 'invalid'), { step: 'stage' }),
    ]);
    const note = ledger.batch(() =>
      ledger.insertItem({
        accountId: refused!,
        kind: 'note',
        naturalKey: 'k',
        body: '{}',
        fingerprint: 'x',
        state: 'pending',
        originFile: 'notes.csv',
        originLine: 3,
      }),
    );
    // Interrupted while waiting to resend: the account and a record keep `aborted` as their last error.
    await ledger.updateAccount(stopped!, { error: { code: 'aborted', detail: 'create: aborted by the caller' } });
    await ledger.updateItems(
      [note],
      { error: { code: 'aborted', detail: 'notes: aborted by the caller' } },
      {
        accountId: refused!,
        step: 'note',
      },
    );
    await ledger.updateAccount(refused!, { error: { code: 'invalid_phone_number', detail: 'bad' } });
    expect(ledger.read.topErrorCodes()).toEqual([{ code: 'invalid_phone_number', count: 1 }]);
    ledger.close();
    const campaign = openCampaignReader(dir);
    expect(campaign.topErrorCodes(undefined, 5)).toEqual([{ code: 'invalid_phone_number', count: 1 }]);
    campaign.close();
  });

  it('marks runs a dead process left running as crashed', () => {
    const ledger = Ledger.open(dir);
    const first = ledger.startRun('push', {});
    ledger.startRun('push', {});
    expect(ledger.read.runs().find((run) => run.id === first)?.status).toBe('crashed');
    ledger.close();
    const reader = openLedgerReader(dir);
    expect(reader.read.runs()).toHaveLength(2);
    reader.close();
  });
});

describe('fingerprints', () => {
  it('ignore key order but not array order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, 1] } })).toBe('{"a":{"c":[3,1],"d":2},"b":1}');
    expect(fingerprintOf({ a: 1, b: 2 })).toBe(fingerprintOf({ b: 2, a: 1 }));
    expect(fingerprintOf([1, 2])).not.toBe(fingerprintOf([2, 1]));
  });

  it('keep every value as it is: "__proto__" stays a key, and a number JSON cannot carry is refused, never null', () => {
    expect(canonicalJson(JSON.parse('{"b": 1, "__proto__": {"x": 2}}'))).toBe('{"__proto__":{"x":2},"b":1}');
    expect(() => canonicalJson({ transfer_balance: Infinity })).toThrow(/JSON cannot carry it/);
    expect(() => canonicalJson({ metadata: [{ value: { n: NaN } }] })).toThrow(/JSON cannot carry it/);
  });
});

describe('the state directory lock', () => {
  it('a second holder is refused while the first holds it, naming its pid, and admitted after release', async () => {
    const lock = acquireLock(dir);
    expect(() => acquireLock(dir)).toThrow(LedgerLockedError);
    expect(() => acquireLock(dir)).toThrow(`another migrate run (pid ${process.pid}) holds the state directory ${dir}`);
    await lock.release();
    const again = acquireLock(dir);
    await again.release();
  });

  it('a holder file left by a run that died names nobody and holds nothing', async () => {
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = await new Promise<number>((resolve) => child.on('exit', () => resolve(child.pid ?? 0)));
    writeFileSync(join(dir, 'run-lock.holder.json'), JSON.stringify({ pid: deadPid, host: hostname() }));
    const lock = acquireLock(dir);
    await lock.release();
  });

  it('is lost when its file is removed (the state directory deleted under a run)', async () => {
    const lock = acquireLock(dir);
    expect(lock.compromised()).toBeUndefined();
    rmSync(join(dir, LOCK_FILE));
    expect(lock.compromised()?.message).toMatch(/run-lock\.sqlite is gone \(ENOENT\)$/);
    await lock.release();
  });

  it("a run of an earlier version (its lock directory refreshed) is not run beside; its stale lock is no one's", async () => {
    mkdirSync(join(dir, 'run.lock'));
    expect(() => acquireLock(dir)).toThrow(`a migrate run of an earlier version holds the state directory ${dir}`);
    const stale = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'run.lock'), stale, stale);
    const lock = acquireLock(dir);
    await lock.release();
  });
});
