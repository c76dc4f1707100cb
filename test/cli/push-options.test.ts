import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from '../e2e/export.js';
import { expectExactState, ledgerAccountState, push, writesReceived } from '../e2e/helpers.js';

// The operator options of `migrate push`, through the real binary against the sandbox
// over HTTP; what was sent is read from the sandbox's own request log and state.

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'push-options-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function workspace(name: string): { dir: string; state: string } {
  const dir = join(root, name);
  return { dir, state: join(dir, 'state') };
}

/** Accounts the sandbox holds for ACME, by external account number. */
const created = (sandbox: RunningSandbox): string[] =>
  sandbox.inspect
    .accounts('ACME')
    .map((account) => account.externalAccountNumber)
    .sort();

function ledgerSnapshot(state: string): unknown {
  const reader = openLedgerReader(state);
  try {
    const accounts = reader.read
      .accounts({ limit: 1000 })
      .map((row) => ({ ...row, items: reader.read.items(row.id), history: reader.read.history(row.id).length }));
    return { counts: reader.read.counts(), runs: reader.read.runs(100), accounts };
  } finally {
    reader.close();
  }
}

interface PlanDocument {
  dry_run: true;
  state_dir: string;
  accounts: Array<{
    external_account_number: string;
    in_plan: boolean;
    reason: string;
    requests: Record<string, number>;
  }>;
  totals: { accounts: number; in_plan: number; reasons: Record<string, number>; requests: Record<string, number> };
  unknown_accounts: string[];
}

describe('migrate push operator options', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ processingMs: 20, seed: 9 });
  });
  afterAll(async () => sandbox.close());

  it('--dry-run sends nothing, changes no ledger, and says why each account is or is not in the plan', async () => {
    const { dir, state } = workspace('dry');
    const data = writeE2eExport(dir, 10, 'DRY');
    sandbox.inspect.resetLog();
    const fresh = await push(sandbox, data.dir, state, ['--dry-run', '--json']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(sandbox.inspect.requests()).toEqual([]);
    expect(existsSync(state), 'the state directory is not even created').toBe(false);
    const plan = JSON.parse(fresh.stdout) as PlanDocument;
    expect(fresh.stdout, 'keys in snake_case, as the service speaks').not.toMatch(/"[a-z]+[A-Z][A-Za-z]*":/);
    expect(plan).toMatchObject({ dry_run: true, state_dir: state });
    expect(plan.totals.in_plan).toBe(plan.accounts.filter((row) => row.in_plan).length);
    const toCreate = data.valid.length + data.errored.length; // ERR- accounts are valid locally
    expect(plan.totals.requests['create']).toBe(toCreate);
    expect(plan.totals.reasons['invalid']).toBe(data.invalid.length);
    expect(plan.accounts).toHaveLength(10);
    for (const number of data.invalid)
      expect(plan.accounts.find((row) => row.external_account_number === number)).toMatchObject({
        in_plan: false,
        reason: 'invalid',
      });
    const withNotes = plan.accounts.find((row) => row.external_account_number === data.valid[0]);
    expect(withNotes).toMatchObject({
      in_plan: true,
      reason: 'create',
      requests: { create: 1, status_check: 1, note: 1, transaction: 1 },
    });

    const real = await push(sandbox, data.dir, state, []);
    expect(real.code, real.stderr).toBe(5);
    const before = ledgerSnapshot(state);
    sandbox.inspect.resetLog();
    const again = await push(sandbox, data.dir, state, ['--dry-run', '--json', '--retry-errored']);
    expect(again.code, again.stderr).toBe(0);
    expect(sandbox.inspect.requests()).toEqual([]);
    expect(ledgerSnapshot(state)).toEqual(before);
    const second = JSON.parse(again.stdout) as PlanDocument;
    expect(second.totals.reasons).toEqual({
      done: data.valid.length,
      invalid: data.invalid.length,
      retry_errored: data.errored.length,
    });
    expect(second.totals.requests['create']).toBe(data.errored.length);

    const text = await push(sandbox, data.dir, state, ['--dry-run', '--limit', '1']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Nothing was sent/);
    expect(text.stdout).toMatch(/account creates\s+0/);
    expect(text.stdout).toMatch(/done already/);
    expect(text.stdout).toMatch(/errored on the platform: held back/);
    expect(ledgerSnapshot(state)).toEqual(before);
  });

  it('--limit takes the first N accounts still to do in the ledger order; --accounts only those named, unknown ones reported', async () => {
    const { dir, state } = workspace('limit');
    const data = writeE2eExport(dir, 10, 'LIM');
    const todo = [...data.valid, ...data.errored].sort(); // staged in external account number order
    const first = await push(sandbox, data.dir, state, ['--limit', '3']);
    expect(first.code, first.stderr).toBe(5);
    expect(created(sandbox).filter((n) => n.includes('LIM'))).toEqual(todo.slice(0, 3));
    const second = await push(sandbox, data.dir, state, ['--limit', '2', '--json']);
    expect(second.code, second.stderr).toBe(5);
    expect(created(sandbox).filter((n) => n.includes('LIM'))).toEqual(todo.slice(0, 5));
    expect((JSON.parse(second.stdout) as { accounts: Record<string, number> }).accounts['staged']).toBe(
      todo.length - 5,
    );

    const chosen = todo.slice(-1)[0] ?? '';
    const named = await push(sandbox, data.dir, state, ['--accounts', `${chosen},NOPE-1`]);
    expect(named.code, named.stderr).toBe(5);
    expect(named.stderr).toMatch(/--accounts: 1 not in the export or the ledger.*NOPE-1/);
    expect(created(sandbox).filter((n) => n.includes('LIM'))).toEqual([...todo.slice(0, 5), chosen].sort());
    expect(ledgerAccountState(state, 'ACME', chosen)).toMatch(/done|errored/);

    const file = join(dir, 'accounts.txt');
    writeFileSync(file, `# canary\n${todo[5]}\n\n${todo[6]}\n`);
    const fromFile = await push(sandbox, data.dir, state, ['--accounts', `@${file}`]);
    expect(fromFile.code, fromFile.stderr).toBe(5);
    expect(created(sandbox).filter((n) => n.includes('LIM'))).toEqual([...todo.slice(0, 7), chosen].sort());

    const rest = await push(sandbox, data.dir, state, []);
    expect(rest.code, rest.stderr).toBe(5);
    await expectExactState(sandbox, data, state, expect);
  });

  it('--only create creates without records; --only notes then pushes only notes and creates nothing', async () => {
    const { dir, state } = workspace('only');
    const data = writeE2eExport(dir, 8, 'ONLY');
    const one = data.valid[0] ?? '';
    const creates = await push(sandbox, data.dir, state, ['--only', 'create']);
    expect(creates.code, creates.stderr).toBe(5);
    expect(sandbox.inspect.account('ACME', one)).toMatchObject({ status: 'PROCESSED', notes: [], transactions: [] });
    expect(ledgerAccountState(state, 'ACME', one)).toBe('processed');

    sandbox.inspect.resetLog();
    const notes = await push(sandbox, data.dir, state, ['--only', 'notes']);
    expect(notes.code, notes.stderr).toBe(5);
    const posts = sandbox.inspect
      .requests()
      .filter((entry) => entry.method === 'POST' && !entry.path.includes('graphql'));
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((entry) => entry.path === '/v1/data-import/notes/create/')).toBe(true);
    const account = sandbox.inspect.account('ACME', one);
    expect(account?.notes.map((note) => note.body).sort()).toEqual([...(data.notes.get(one) ?? [])].sort());
    expect(account?.transactions).toEqual([]);
    expect(account?.createRequestsAccepted).toBe(1);
    expect(ledgerAccountState(state, 'ACME', one)).toBe('processed');

    const rest = await push(sandbox, data.dir, state, []);
    expect(rest.code, rest.stderr).toBe(5);
    await expectExactState(sandbox, data, state, expect);
  });

  it('--log-file appends one line per event with the run id, 0600, holding no secret and no personal data', async () => {
    const secret = await startSandbox({ processingMs: 20, seed: 3, apiKey: 'sk-live-VERY-SECRET-KEY-987' });
    try {
      const { dir, state } = workspace('log');
      const data = writeE2eExport(dir, 6, 'LOG');
      const log = join(dir, 'push.ndjson');
      const result = await push(secret, data.dir, state, ['--log-file', log]);
      expect(result.code, result.stderr).toBe(5);
      expect(statSync(log).mode & 0o777).toBe(0o600);
      const text = readFileSync(log, 'utf8');
      const lines = text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const reader = openLedgerReader(state);
      const runId = reader.read.runs(1)[0]?.id;
      reader.close();
      expect(lines.every((line) => line['run'] === runId)).toBe(true);
      expect(lines.at(-1)).toMatchObject({ event: 'log_closed', outcome: 'finished', exit_code: 5 });
      expect(
        lines
          .filter((line) => line['event'] === 'account' && line['outcome'] === 'errored')
          .map((line) => line['account']),
      ).toEqual(data.errored);
      for (const forbidden of [
        'sk-live-VERY-SECRET-KEY-987',
        'Authorization',
        'example.org',
        'Person ',
        'Given',
        'Family',
        'High Street',
        'note one of',
        '+44',
      ]) {
        expect(text, forbidden).not.toContain(forbidden);
      }
    } finally {
      await secret.close();
    }
  });

  it('--api-key-file is read through the service configuration (it wins over MIGRATE_API_KEY)', async () => {
    const { dir, state } = workspace('keyfile');
    const data = writeE2eExport(dir, 2, 'KEY');
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${sandbox.apiKey}\n`, { mode: 0o600 });
    const result = await push({ ...sandbox, apiKey: 'wrong-key' }, data.dir, state, [
      '--api-key-file',
      keyFile,
      '--header-form',
      'token',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(sandbox.apiKey);
  });

  it('--sandbox makes the configured supplier Ongoing in the built-in sandbox', async () => {
    const { dir, state } = workspace('sandbox-supplier');
    const data = writeE2eExport(dir, 2, 'NOR');
    // Without an import_supplier column, the configured supplier (--supplier) fills it.
    for (const name of ['accounts.csv', 'payment_instructions.csv']) {
      const path = join(data.dir, name);
      const rows = readFileSync(path, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => line.split(','));
      const column = rows[0]?.indexOf('import_supplier') ?? -1;
      writeFileSync(path, `${rows.map((cells) => cells.filter((_, i) => i !== column).join(',')).join('\n')}\n`);
    }
    const result = await push(sandbox, data.dir, state, ['--sandbox', '--supplier', 'NORTH', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { accounts: Record<string, number> }).accounts).toEqual({ done: 2 });
  });

  it('refuses malformed option values with exit 2 before anything is sent', async () => {
    const { dir, state } = workspace('usage');
    const data = writeE2eExport(dir, 2, 'USE');
    sandbox.inspect.resetLog();
    for (const extra of [
      ['--only', 'notes,accounts'],
      ['--max-errors', '5x'],
      ['--max-errors', '101%'],
      ['--limit', '0'],
      ['--accounts', '@/nonexistent/list'],
      ['--progress-interval', '0'],
      ['--metrics-interval', '1.5'],
      ['--metrics-file', '/nonexistent/dir/migrate.prom'],
    ]) {
      const result = await push(sandbox, data.dir, state, extra);
      expect(result.code, `${extra.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/--only|--max-errors|--limit|--accounts|--progress-interval|--metrics-/);
    }
    expect(writesReceived(sandbox)).toBe(0);
    expect(existsSync(state), 'nothing written').toBe(false);
  });

  it('--quiet prints the summary only; --no-wait shows the rate of creates, never a rate of 0 processed', async () => {
    const { dir, state } = workspace('quiet');
    const data = writeE2eExport(dir, 6, 'QUI');
    const result = await push(sandbox, data.dir, state, ['--quiet', '--no-wait', '--progress-interval', '1']);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).not.toMatch(/^migrate: (\[|staged)/m);
    expect(result.stdout).toMatch(/\(\d+\.\ds, \d+\.\d accounts created\/s\)/);
    expect(result.stdout).not.toContain('0.0 accounts/s');
    const loud = await push(sandbox, data.dir, join(dir, 'state-2'), ['--no-wait']);
    expect(loud.stderr).toMatch(/^migrate: staged 6 accounts/m);
  });
});

describe('--max-errors', () => {
  it('stops taking new work once exceeded (exit 5: ERRORED accounts left; the ledger consistent), and a rerun continues', async () => {
    const sandbox = await startSandbox({ processingMs: 10, erroredShare: 0.5, seed: 21 });
    try {
      const { dir, state } = workspace('max');
      const data = writeE2eExport(dir, 30, 'MAX');
      const stopped = await push(sandbox, data.dir, state, ['--max-errors', '2', '--concurrency', '1', '--json']);
      expect(stopped.code, stopped.stderr).toBe(5);
      const summary = JSON.parse(stopped.stdout) as {
        result: string;
        max_errors: number;
        exit_code: number;
        accounts: Record<string, number>;
      };
      expect(stopped.stdout, 'keys in snake_case, as the service speaks').not.toMatch(/"[a-z]+[A-Z][A-Za-z]*":/);
      expect(summary).toMatchObject({ result: 'max_errors', max_errors: 2, exit_code: 5, state_dir: state });
      expect(summary.accounts['errored']).toBe(3);
      expect(summary.accounts['creating'] ?? 0).toBe(0);
      const left =
        (summary.accounts['scheduled'] ?? 0) + (summary.accounts['processed'] ?? 0) + (summary.accounts['staged'] ?? 0);
      expect(left, 'work left for the next run').toBeGreaterThan(0);
      const reader = openLedgerReader(state);
      expect(reader.read.runs(1)[0]).toMatchObject({ status: 'max_errors', exitCode: 5 });
      reader.close();

      const rest = await push(sandbox, data.dir, state, ['--json']);
      expect(rest.code, rest.stderr).toBe(5);
      const final = JSON.parse(rest.stdout) as { accounts: Record<string, number> };
      const total = data.valid.length + data.errored.length;
      expect((final.accounts['done'] ?? 0) + (final.accounts['errored'] ?? 0)).toBe(total);
      for (const account of sandbox.inspect.accounts('ACME'))
        expect(account.createRequestsAccepted, account.externalAccountNumber).toBe(1);
    } finally {
      await sandbox.close();
    }
  });
});
