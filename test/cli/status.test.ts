import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImportServiceClient } from '../../src/api/index.js';
import { Ledger } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeOpsExport, type OpsExport } from '../commands/report/ops-export.js';
import { SAMPLE_OPEN_PERIOD } from '../e2e/helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// Issue 6 "Done when", end to end: the real binary pushes an export with planted data errors
// and ERR- accounts to an in-process sandbox; then `status` and `report` (the real binary
// again) must agree with the sandbox's own state (its inspector) and name every planted error.
// dist/ is built once for the whole run by test/global-setup.ts.

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let sandbox: RunningSandbox;
let ops: OpsExport;
let state: string;
let logFile: string;

function migrate(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr: afterOriginLine(stderr) })),
  );
}

const service = (): string[] => ['--base-url', sandbox.url];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'operate-'));
  // A distinctive key, so that any trace of it in the log file is found.
  sandbox = await startSandbox({ processingMs: 30, apiKey: 'sk-ops-e2e-SECRET-0001' });
  ops = writeOpsExport(dir);
  state = join(dir, 'state');
  logFile = join(dir, 'push.ndjson');
  const pushed = await migrate(['push', ops.dir, ...service(), '--state', state, '--log-file', logFile]);
  // Invalid and ERRORED accounts: finished, not everything done.
  expect(pushed.code, pushed.stderr).toBe(5);
  // An import process the ledger does not know (another tool, another state directory).
  const client = createImportServiceClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey } });
  await client.createAccount({
    import_supplier: 'ACME',
    external_account_number: 'FOREIGN-1',
    account_type: 'DOMESTIC',
    customers: [{ given_name: 'Fay', family_name: 'Foreign' }],
    supply_addresses: [
      { supply_address1: '1 Far Road', supply_postcode: 'LS1 1AA', customer_at_supply_address_from_date: '2024-01-01' },
    ],
  } as never);
  await client.close();
  sandbox.control.settleAll();
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migrate status', () => {
  it('--json: counts and every row match the sandbox inspector', async () => {
    const run = await migrate(['status', 'ACME', ...service(), '--state', state, '--json']);
    // ERRORED and invalid accounts: exit 5, for --json as for the text.
    expect(run.code, run.stderr).toBe(5);
    const doc = JSON.parse(run.stdout);
    const truth = sandbox.inspect.accounts('ACME');
    const processed = truth.filter((account) => account.status === 'PROCESSED');
    const errored = truth.filter((account) => account.status === 'ERRORED');
    expect(doc.counts.service).toMatchObject({
      all: truth.length,
      imported: processed.length,
      pending: truth.length - processed.length,
      errored: errored.length,
    });
    expect(doc.counts.ledger).toEqual({
      done: ops.done.length + 1,
      invalid: ops.invalid.length,
      errored: ops.errored.length,
    });
    expect(doc.counts.only_on_service).toBe(1);
    expect(doc.only_on_service).toEqual([
      {
        external_account_number: 'FOREIGN-1',
        platform_account_number: sandbox.inspect.account('ACME', 'FOREIGN-1')?.platformAccountNumber,
      },
    ]);
    expect(doc.errored.map((row: { external_account_number: string }) => row.external_account_number).sort()).toEqual(
      ops.errored,
    );
    expect(doc.errored[0].code).toBe(errored[0]?.latestError?.code);
    // One row per account either side knows; each with the service's number and state.
    const rows = new Map<string, { state: string | null; service: string; platform_account_number: string | null }>(
      doc.accounts.map((row: { external_account_number: string }) => [row.external_account_number, row]),
    );
    expect(rows.size).toBe(doc.accounts.length);
    expect([...rows.keys()].sort()).toEqual(
      [...new Set([...truth.map((account) => account.externalAccountNumber), ...ops.invalid])].sort(),
    );
    for (const account of truth) {
      const row = rows.get(account.externalAccountNumber);
      expect(row?.platform_account_number ?? null, account.externalAccountNumber).toBe(account.platformAccountNumber);
      expect(row?.service, account.externalAccountNumber).toBe(account.status === 'PROCESSED' ? 'imported' : 'pending');
    }
    for (const number of ops.invalid)
      expect(rows.get(number)).toMatchObject({ state: 'invalid', service: 'absent', platform_account_number: null });
  });

  it('piped: the sections of a terminal without colour, held records named, the next step first; --offline reads the ledger only', async () => {
    const plain = await migrate(['status', 'ACME', ...service(), '--state', state]);
    expect(plain.code, plain.stderr).toBe(5);
    expect(plain.stdout).not.toContain('\u001b[');
    expect(plain.stdout).toMatch(new RegExp(`^ {4}done +${ops.done.length + 1}$`, 'm'));
    expect(plain.stdout).toMatch(/^ {4}held back: invalid \(fix the export\) +4$/m);
    expect(plain.stdout).toMatch(/^ {4}ERR-0001 {2}account_creation_failed /m);
    expect(plain.stdout).toMatch(/^ {4}FOREIGN-1 {2}A-[0-9A-F]{8}$/m);
    expect(plain.stdout).toMatch(/^ {4}ERR-0001 +note +waiting: account ERRORED +- +notes\.csv:10$/m);
    expect(plain.stdout).not.toMatch(/\bpending\b.*notes\.csv/);
    const lines = plain.stdout.trimEnd().split('\n');
    const next = lines.findIndex((line) => line.startsWith('next: '));
    // The invalid accounts' own records wait behind them: a push does not send those.
    expect(lines[next]).toBe(
      // The hint names this state directory and the export directory the last push read.
      `next: 4 accounts and 1 record need data fixes (11 records wait for them): migrate report --state ${state} ` +
        `--out DIR (fix-data.csv), fix the export, then migrate push ${realpathSync(ops.dir)} --state ${state}`,
    );
    expect(lines.slice(next + 1).every((line) => line.startsWith('then: '))).toBe(true);
    const offline = await migrate(['status', 'ACME', '--state', state, '--offline', '--json'], {
      MIGRATE_API_KEY: undefined,
    });
    expect(offline.code, offline.stderr).toBe(5);
    const doc = JSON.parse(offline.stdout);
    expect(doc.sources).toEqual({ ledger: true, service: false });
    expect(doc.accounts).toHaveLength(ops.done.length + 1 + ops.invalid.length + ops.errored.length);
    expect(doc.accounts.every((row: { service: unknown }) => row.service === null)).toBe(true);
    expect(doc.next_steps[0]).toMatch(/^4 accounts and 1 record need data fixes/);
  });

  it('exit 0 when every account of the ledger is done (the sample export, on a sandbox of its own)', async () => {
    const own = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    try {
      const env = { MIGRATE_API_KEY: own.apiKey };
      const doneState = join(dir, 'state-done');
      const sample = join(ROOT, 'fixtures', 'sample');
      const pushed = await migrate(['push', sample, '--base-url', own.url, '--state', doneState], env);
      expect(pushed.code, pushed.stderr).toBe(0);
      for (const args of [[], ['--json'], ['--offline']]) {
        const run = await migrate(['status', 'ACME', '--base-url', own.url, '--state', doneState, ...args], env);
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      }
      const text = await migrate(['status', 'ACME', '--base-url', own.url, '--state', doneState], env);
      expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('next: all 50 accounts done: nothing left to do');
      // The same service without the ledger (the default state directory holds none): never "no accounts yet".
      const unread = await migrate(['status', 'ACME', '--base-url', own.url], env);
      expect(unread.stdout).not.toContain('no accounts yet');
      expect(unread.stdout.trimEnd().split('\n').at(-1)).toBe(
        'next: the service lists 50 accounts of ACME and no ledger was read: give --state DIR (the directory of the ' +
          "migration's push runs) or --ledger URL",
      );
    } finally {
      await own.close();
    }
  });

  it('exit 3 when the service refuses the credentials or cannot be reached, --json too', async () => {
    for (const args of [[], ['--json']]) {
      const refused = await migrate(['status', 'ACME', ...service(), '--state', state, ...args], {
        MIGRATE_API_KEY: 'sk-wrong-key',
      });
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    }
    const closed = await startSandbox({ processingMs: 0 });
    const url = closed.url;
    await closed.close();
    // (Without a ledger, the default state directory being empty: this state directory's ledger records the service it
    // was pushed to, and refuses another.)
    const unreachable = await migrate(['status', 'ACME', '--base-url', url, '--json']);
    expect(unreachable.code, unreachable.stderr).toBe(3);
  });

  it('without a service URL says what status can do instead (--offline), never --sandbox, which it has not', async () => {
    const run = await migrate(['status', 'ACME'], { MIGRATE_BASE_URL: undefined });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'no service URL: pass --base-url URL or set MIGRATE_BASE_URL (or --offline for the ledger alone)',
    );
    expect(run.stderr).not.toContain('--sandbox');
  });

  it('works without a ledger in the default state directory (the service view only) and says so', async () => {
    const run = await migrate(['status', 'ACME', ...service(), '--json']);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stderr).toContain('no ledger in');
    const doc = JSON.parse(run.stdout);
    expect(doc.sources).toEqual({ ledger: false, service: true });
    expect(doc.accounts).toHaveLength(sandbox.inspect.accounts('ACME').length);
    expect(doc.counts.errored).toBe(2);
  });

  it('a --state given (flag or run configuration) that holds no ledger is exit 2 naming it, never "all is well"', async () => {
    const mistyped = join(dir, 'stat');
    const flag = await migrate(['status', 'ACME', ...service(), '--state', mistyped]);
    expect(flag.code, flag.stderr).toBe(2);
    expect(flag.stderr).toBe(
      `migrate: no ledger in ${mistyped} (ledger.sqlite not found, or left unfinished by a run killed as it created ` +
        `it): give the --state directory of the migration's ` +
        'push runs\n',
    );
    expect(flag.stdout).toBe('');
    const cohort = join(dir, 'cohort-mistyped');
    mkdirSync(cohort);
    writeFileSync(join(cohort, 'migrate.run.json'), JSON.stringify({ state: 'stat', supplier: 'ACME' }));
    const file = await migrate(['status', ...service(), '--run-config', join(cohort, 'migrate.run.json')]);
    expect(file.code, file.stderr).toBe(2);
    expect(file.stderr).toContain(`no ledger in ${join(cohort, 'stat')}`);
  });

  it("takes the supplier from MIGRATE_SUPPLIER or the run configuration's supplier when none is given", async () => {
    const cohort = join(dir, 'cohort');
    mkdirSync(cohort);
    writeFileSync(join(cohort, 'migrate.run.json'), JSON.stringify({ state, supplier: 'ACME' }));
    const fromFile = await migrate([
      'status',
      ...service(),
      '--run-config',
      join(cohort, 'migrate.run.json'),
      '--json',
    ]);
    expect(fromFile.code, fromFile.stderr).toBe(5);
    expect(JSON.parse(fromFile.stdout).import_supplier).toBe('ACME');
    const fromEnv = await migrate(['status', ...service(), '--state', state, '--json'], { MIGRATE_SUPPLIER: 'ACME' });
    expect(JSON.parse(fromEnv.stdout).import_supplier).toBe('ACME');
    const none = await migrate(['status', ...service(), '--state', state]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no import supplier: give it (migrate status SUPPLIER), or set MIGRATE_SUPPLIER');
  });

  it('names the accounts only the ledger knows (a ledger from before it recorded its service, read against another)', async () => {
    const other = await startSandbox({ processingMs: 0 });
    try {
      // A ledger that records its service refuses another (exit 2) ...
      const refused = await migrate(['status', 'ACME', '--base-url', other.url, '--state', state], {
        MIGRATE_API_KEY: other.apiKey,
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`was used with ${sandbox.url} (spec dialect); this run asks for ${other.url}`);
      // ... one from before the record cannot tell, and shows what the service does not know.
      const legacy = join(dir, 'state-legacy');
      cpSync(state, legacy, { recursive: true });
      const ledger = Ledger.open(legacy);
      ledger.db.exec(`DELETE FROM settings WHERE key = 'service_url'`);
      ledger.close();
      const run = await migrate(['status', 'ACME', '--base-url', other.url, '--state', legacy, '--json'], {
        MIGRATE_API_KEY: other.apiKey,
      });
      expect(run.code, run.stderr).toBe(5);
      const doc = JSON.parse(run.stdout);
      const sent = [...ops.done, 'OPS-0005', ...ops.errored].sort();
      expect(doc.counts.only_in_ledger).toBe(sent.length);
      expect(
        doc.only_in_ledger.map((row: { external_account_number: string }) => row.external_account_number).sort(),
      ).toEqual(sent);
      // Held back by local validation: never sent, so the service is right not to know them.
      const invalid = doc.accounts.filter((row: { state: string }) => row.state === 'invalid');
      expect(invalid.map((row: { mismatch: unknown }) => row.mismatch)).toEqual(ops.invalid.map(() => null));
    } finally {
      await other.close();
    }
  });

  it('--account tells the story of an ERRORED account', async () => {
    const run = await migrate(['status', 'ACME', ...service(), '--state', state, '--account', 'ERR-0001']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('ledger: errored');
    expect(run.stdout).toMatch(/create staged -> creating {2}\(intent\)/);
    expect(run.stdout).toMatch(/poll scheduled -> errored {2}\(account_creation_failed\)/);
    expect(run.stdout).toContain('service v2: ERRORED');
    expect(run.stdout).toMatch(/latest_error account_creation_failed \(import_process\)/);
    expect(run.stdout).toContain('service v1: UNKNOWN');
    expect(run.stdout).toMatch(/note notes\.csv:10: pending/);
  });

  it('--account --json tells the story of a done account, never a record body', async () => {
    const run = await migrate(['status', 'ACME', ...service(), '--state', state, '--account', 'OPS-0001', '--json']);
    const story = JSON.parse(run.stdout);
    const truth = sandbox.inspect.account('ACME', 'OPS-0001');
    expect(story.ledger.state).toBe('done');
    expect(story.service.v2).toMatchObject({ status: 'PROCESSED', platform_identifier: truth?.platformIdentifier });
    expect(story.service.v1).toMatchObject({
      status: 'COMPLETED',
      platform_account_number: truth?.platformAccountNumber,
    });
    expect(
      story.ledger.history.map((event: { step: string; toState: string }) => `${event.step}:${event.toState}`),
    ).toEqual(expect.arrayContaining(['stage:staged', 'create:scheduled', 'done:done']));
    expect(
      story.ledger.records
        .map((record: { record: string; state: string }) => `${record.record}:${record.state}`)
        .sort(),
    ).toEqual(['note:done', 'payment_instruction:done', 'transaction:done']);
    for (const text of ops.personal) expect(run.stdout).not.toContain(text);
  });
});

describe('push --log-file (the sink of src/commands/push/ndjson-log.ts, wired by push)', () => {
  it('tells the run account by account and holds no secret and no personal data', () => {
    const text = readFileSync(logFile, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ event: 'log_opened' });
    expect(lines.at(-1)).toMatchObject({ event: 'log_closed', exit_code: 5 });
    const errored = lines
      .filter((line) => line['event'] === 'account' && line['outcome'] === 'errored')
      .map((line) => line['account']);
    expect(errored.sort()).toEqual(ops.errored);
    expect(text).not.toContain(sandbox.apiKey);
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
    expect(text).not.toMatch(/[0-9a-f]{40,}/);
    for (const personal of ops.personal) expect(text, personal).not.toContain(personal);
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
  });
});

describe('output to a reader that goes away', () => {
  it('status --json | head: ends quietly with exit 0, no stack trace', async () => {
    const big = join(dir, 'big-state');
    const ledger = Ledger.open(big);
    ledger.batch(() => {
      for (let n = 0; n < 5000; n += 1) {
        ledger.insertAccount(
          {
            importSupplier: 'ACME',
            externalAccountNumber: `BIG-${n}`,
            state: 'done',
            payload: '{}',
            fingerprint: 'f',
            originFile: 'accounts.csv',
            originLine: n + 2,
            origins: null,
          },
          { step: 'stage' },
        );
      }
    });
    ledger.close();
    const child = spawn(process.execPath, [BIN, 'status', 'ACME', '--state', big, '--offline', '--json'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Like `head -c`: read the first chunk, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(afterOriginLine(stderr)).toBe('');
    expect(code).toBe(0);
  });
});

describe('migrate report', () => {
  it('accounts.csv: one row per account, keyed by external account number, with the state (and the platform identifier where known) the sandbox has', async () => {
    const out = join(dir, 'report');
    const run = await migrate(['report', '--state', state, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const rows = parse(readFileSync(join(out, 'accounts.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(rows.map((row) => row['external_account_number']).sort()).toEqual(
      [...ops.done, 'OPS-0005', ...ops.invalid, ...ops.errored].sort(),
    );
    for (const row of rows) {
      const number = row['external_account_number'] ?? '';
      const truth = sandbox.inspect.account('ACME', number);
      const expected = truth === undefined ? 'invalid' : truth.status === 'PROCESSED' ? 'done' : 'errored';
      expect(row['state'], number).toBe(expected);
      // Known only where v2 status was read (a reconciled create): an account settled through v1 transfer status or
      // the imported-accounts list, which carry the platform account number only, has none.
      expect(['', truth?.platformIdentifier ?? ''], number).toContain(row['platform_identifier']);
      if (expected === 'errored') expect(row['error_code'], number).toBe(truth?.latestError?.code);
    }
  });

  it('accounts.csv: the platform account numbers the sandbox gave', async () => {
    const out = join(dir, 'report-numbers');
    await migrate(['report', '--state', state, '--out', out]);
    const rows = parse(readFileSync(join(out, 'accounts.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    for (const row of rows) {
      const truth = sandbox.inspect.account('ACME', row['external_account_number'] ?? '');
      expect(row['platform_account_number'], row['external_account_number']).toBe(truth?.platformAccountNumber ?? '');
    }
  });

  it('a place it cannot write to, or no ledger: exit 2 with a message naming it, no stack trace', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const run = await migrate(['report', '--state', state, '--out', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `migrate: --out ${file}: cannot write the report there (EEXIST); give a writable directory\n`,
    );
    const none = await migrate(['report', '--state', join(dir, 'no-state')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^migrate: no ledger in .*no-state \(ledger\.sqlite not found, or left unfinished/);
  });

  it('fix-data.csv names every planted error with its file and line', async () => {
    const out = join(dir, 'report-fix');
    await migrate(['report', '--state', state, '--out', out]);
    const rows = parse(readFileSync(join(out, 'fix-data.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    for (const planted of ops.planted) {
      const match = rows.find(
        (row) =>
          row['external_account_number'] === planted.account &&
          row['file'] === planted.file &&
          row['line'] === String(planted.line),
      );
      expect(match, `${planted.account} ${planted.file}:${planted.line}`).toBeDefined();
      if (planted.column) expect(match?.['column']).toBe(planted.column);
      expect(match?.['code']).not.toBe('');
    }
    // Nothing else: every row is a planted error.
    expect(rows).toHaveLength(ops.planted.length);
  });
});
