import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger, openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startSandboxProcess, type SandboxAccount } from '../soak/sandbox-child.js';
import { writeE2eExport, type E2eExport } from './export.js';
import { expectExactState, push, ROOT } from './helpers.js';
import { exportInMemory, payloadDifferences, type ExpectedExport } from './oracle.js';

// A cut-over that runs itself for several nights (docs/operators-guide.md section 3): the guide's crontab, read from
// the guide and run as cron runs it (sh -c, an almost empty environment, the key in a file), back to back, with no
// wait between runs: the sandbox's processing is settled by its control API, or short.

const BIN = join(ROOT, 'bin', 'migrate.js');
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cutover-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Crontab {
  /** The crontab's variable lines (NAME=value). */
  env: Record<string, string>;
  /** Each job's command, the five time fields cut. */
  jobs: string[];
}

/** The run configuration docs/operators-guide.md's crontab names, exactly as printed there. */
function guideRunConfig(): string {
  const guide = readFileSync(join(ROOT, 'docs', 'operators-guide.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## 3. Under cron'));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  expect(blocks.length, 'a run configuration in the cron section').toBeGreaterThan(0);
  return blocks[0] ?? '';
}

/** The crontab of docs/operators-guide.md, exactly as printed there. */
function guideCrontab(): Crontab {
  const guide = readFileSync(join(ROOT, 'docs', 'operators-guide.md'), 'utf8');
  const blocks = [...guide.matchAll(/```cron\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  expect(blocks, 'one crontab in the guide').toHaveLength(1);
  const crontab: Crontab = { env: {}, jobs: [] };
  for (const line of (blocks[0] ?? '').split('\n').filter((text) => text.trim() !== '')) {
    const variable = /^([A-Z_]+)=(.*)$/.exec(line);
    if (variable) crontab.env[variable[1] ?? ''] = variable[2] ?? '';
    else crontab.jobs.push(line.replace(/^(\S+\s+){5}/, ''));
  }
  return crontab;
}

/**
 * A host for the crontab under `dir`: its paths (/srv/migrate, /etc/migrate/key, /var/log/migrate, /tmp) moved into
 * it, the installed `/opt/migrate/bin/migrate` this checkout's binary, and `mail` a shell function that appends to `dir`/mailbox.
 */
function cronHost(dir: string, serviceUrl: string, apiKey: string) {
  const crontab = guideCrontab();
  for (const sub of ['log', 'tmp', 'etc']) mkdirSync(join(dir, sub), { recursive: true });
  const keyFile = join(dir, 'etc', 'key');
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 });
  const moved: Record<string, string> = {
    '/opt/migrate/bin/migrate': `"${process.execPath}" "${BIN}"`,
    '/srv/migrate': dir,
    '/etc/migrate/key': keyFile,
    '/var/log/migrate': join(dir, 'log'),
    '/tmp/': `${join(dir, 'tmp')}/`,
  };
  // One pass: a path moved into `dir` (itself under the system's /tmp) is not moved again.
  const local = (command: string): string =>
    command.replace(
      /\/opt\/migrate\/bin\/migrate|\/srv\/migrate|\/etc\/migrate\/key|\/var\/log\/migrate|\/tmp\//g,
      (path) => moved[path] ?? path,
    );
  // The run configuration the crontab names, at its place under `dir`, with the service's URL in it.
  const runConfig = local(guideRunConfig()).replace('https://<service host>', serviceUrl);
  const runConfigPath = local(crontab.env['MIGRATE_RUN_CONFIG'] ?? '');
  expect(runConfigPath.startsWith(dir), 'the crontab names the run configuration under /srv/migrate').toBe(true);
  writeFileSync(runConfigPath, runConfig);
  const mailbox = join(dir, 'mailbox');
  const mail = `mail() { printf 'Subject: %s\\n' "$2" >> "${mailbox}"; cat >> "${mailbox}"; }`;
  const env = { ...crontab.env, MIGRATE_RUN_CONFIG: runConfigPath, PATH: process.env['PATH'] ?? '', HOME: dir };
  const job = (pattern: RegExp): string => {
    const found = crontab.jobs.find((command) => pattern.test(command));
    expect(found, `the guide's crontab has a job matching ${pattern}`).toBeDefined();
    return `${mail}\n${local(found ?? '')}`;
  };
  const run = (command: string): Promise<number | null> =>
    new Promise((resolve) => spawn('sh', ['-c', command], { env, stdio: 'ignore' }).on('close', resolve));
  return {
    push: () => run(job(/bin\/migrate push /)),
    status: () => run(job(/bin\/migrate status /)),
    mails: (): string[] => (existsSync(mailbox) ? readFileSync(mailbox, 'utf8') : '').match(/^Subject: .*$/gm) ?? [],
    state: join(dir, 'cohort-1'),
    log: (name: string): string => readFileSync(join(dir, 'log', name), 'utf8'),
  };
}

describe("the operators' guide's crontab", () => {
  it('is what cron would run: --no-wait pushes converge, and the status job mails until the migration is done', async () => {
    // Processing far longer than any run: nothing is imported until the control API settles it.
    const sandbox = await startSandbox({ processingMs: 600_000 });
    try {
      const host = join(root, 'srv');
      const data = writeE2eExport(host, 30, 'CRON', 'spec', { clean: true, dir: join('exports', 'cohort-1') });
      const cron = cronHost(host, sandbox.url, sandbox.apiKey);
      // First night: every account created and waiting for processing; not finished, so exit 1.
      expect(await cron.push()).toBe(1);
      expect(counts(cron.state)).toEqual({ scheduled: 30 });
      // The status job: exit 1 (not finished), so the mail goes (the job's own exit is then the mail's).
      await cron.status();
      expect(cron.mails()).toEqual([
        'Subject: ACME migration: next: not finished: the next migrate push EXPORT_DIR checks 30 accounts waiting ' +
          `for processing on the service (a push waits for them, --no-wait not), and sends ${recordsOf(data)} ` +
          'records once their account is imported',
      ]);
      // The service processes them; the next run takes them up although it does not wait for anything.
      sandbox.control.settleAll();
      expect(await cron.push()).toBe(0);
      await expectExactState(sandbox, data, cron.state, expect);
      expect(await cron.status()).toBe(0);
      expect(cron.mails()).toHaveLength(1); // done: status exits 0, no mail
      const closed = cron
        .log('cohort-1.ndjson')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { event: string; exit_code?: number })
        .filter((event) => event.event === 'log_closed');
      expect(closed.map((event) => event.exit_code)).toEqual([1, 0]);
      expect(cron.log('cohort-1.out')).toContain("push finished this run's work, not the migration: 30 accounts");
      expect(cron.log('cohort-1.out')).toContain('push finished: everything done');
      // Cron mail with time: every line of the two runs' output starts with the time and its run's id.
      // (An empty line, between a summary's sections, stays empty.)
      const lines = cron
        .log('cohort-1.out')
        .split('\n')
        .filter((line) => line !== '');
      for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z run (\d+|-) /);
      const runs = new Set(lines.map((line) => /^\S+ run (\d+) /.exec(line)?.[1]).filter(Boolean));
      expect(runs.size).toBe(2);
    } finally {
      await sandbox.close();
    }
  });

  it('converges against the sandbox in its own process (processing 0.3-0.9 s): 200 accounts with every record kind land within 5 runs, and status exits 0', async () => {
    const sandbox = await startSandboxProcess({ processingMs: 300, processingSpreadMs: 600, seed: 5 });
    try {
      const host = join(root, 'srv-own-process');
      const data = writeE2eExport(host, 200, 'OWN', 'spec', { clean: true, dir: join('exports', 'cohort-1') });
      const cron = cronHost(host, sandbox.url, sandbox.apiKey);
      const codes: Array<number | null> = [];
      // Back to back, as a cron firing "every few seconds" would, with no pause between runs.
      while (codes.length < 5 && codes.at(-1) !== 0) codes.push(await cron.push());
      expect(codes.at(-1), `exit codes of the runs: ${codes.join(', ')}`).toBe(0);
      expect(counts(cron.state)).toEqual({ done: 200 });
      expect(await cron.status()).toBe(0);
      expect(cron.mails()).toEqual([]);
      const expected = await exportInMemory(data.dir, { MIGRATE_SUPPLIER: 'ACME' });
      expect(differences(data, await sandbox.dump(), expected)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});

describe('a configuration refusal (an import supplier the service does not know yet)', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ processingMs: 20 });
  });
  afterAll(async () => sandbox.close());

  it('stops the run after at most 2 x concurrency creates (exit 3, what to fix), holds nothing back: once the supplier is set up the next run sends every account', async () => {
    const data = newcoExport(join(root, 'newco'), 40, 'NEW');
    const state = join(root, 'newco', 'state');
    const refused = await push(sandbox, data.dir, state, ['--concurrency', '4']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('configuration_refused');
    expect(refused.stderr).toContain('the service does not know import supplier NEWCO, or does not take it yet');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(creates(sandbox)).toBeLessThanOrEqual(2 * 4);
    // Staging stopped with the run: what it staged is held back in nothing (staged, not invalid), none created.
    expect(Object.keys(counts(state))).toEqual(['staged']);
    expect(sandbox.inspect.accounts('NEWCO')).toEqual([]);

    sandbox.control.setSupplierStatus('NEWCO', 'Ongoing');
    const sent = await push(sandbox, data.dir, state, ['--concurrency', '4']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(counts(state)).toEqual({ done: 40 });
    const accounts = sandbox.inspect.accounts('NEWCO');
    expect(accounts).toHaveLength(40);
    expect(accounts.every((account) => account.createRequestsAccepted === 1)).toBe(true);
  });

  it('accounts an earlier version held back as invalid for it are sent again by --retry-invalid CODE, and only by it', async () => {
    sandbox.control.setSupplierStatus('NEWCO', 'Ongoing');
    const data = newcoExport(join(root, 'held'), 6, 'HELD');
    const state = join(root, 'held', 'state');
    const first = await push(sandbox, data.dir, state, []);
    expect(first.code, first.stderr).toBe(0);
    // What an earlier version left: the accounts refused on import_supplier held as invalid, never created.
    const ledger = Ledger.open(state);
    for (const number of data.valid) {
      const account = ledger.findAccount('NEWCO', number);
      ledger.batch(() => {
        ledger.updateAccountNow(account?.id ?? 0, {
          state: 'invalid',
          error: { code: 'invalid_import_supplier', detail: 'not known', attr: 'import_supplier' },
        });
        ledger.replaceIssues(account?.id ?? 0, [
          { code: 'invalid_import_supplier', message: 'not known', attr: 'import_supplier', source: 'service' },
        ]);
        ledger.updateItemsNow(
          ledger.read.items(account?.id ?? 0).map((item) => item.id),
          { state: 'pending' },
        );
      });
    }
    ledger.close();
    const plain = await push(sandbox, data.dir, state, []);
    expect(plain.code).toBe(1);
    expect(counts(state)).toEqual({ invalid: 6 });
    const retried = await push(sandbox, data.dir, state, ['--retry-invalid', 'invalid_import_supplier']);
    expect(retried.stderr).toContain(
      '--retry-invalid invalid_import_supplier: 6 account(s) the service refused with this code are sent again',
    );
    // Already imported by the first run: adopted, and their records (dedup) settled again.
    expect(retried.code, retried.stderr).toBe(0);
    expect(counts(state)).toEqual({ done: 6 });
  });
});

/** An export of `size` clean accounts of the supplier NEWCO, which the sandbox does not know until it is set up. */
function newcoExport(dir: string, size: number, prefix: string): E2eExport {
  const data = writeE2eExport(dir, size, prefix, 'spec', { clean: true });
  for (const file of ['accounts.csv', 'payment_instructions.csv']) {
    const path = join(data.dir, file);
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll(',ACME,', ',NEWCO,'));
  }
  return data;
}

/** The post-import records of an export's valid accounts. */
function recordsOf(data: E2eExport): number {
  const total = (map: Map<string, string[]>): number => [...map.values()].reduce((sum, list) => sum + list.length, 0);
  return total(data.notes) + total(data.transactions) + total(data.statements) + data.paymentInstructions.size;
}

function creates(sandbox: RunningSandbox): number {
  return sandbox.inspect
    .requests()
    .filter((entry) => entry.method === 'POST' && entry.path === '/v2/data-import/accounts/').length;
}

/** Accounts per state in a state directory's ledger. */
function counts(state: string): Record<string, number> {
  const reader = openLedgerReader(state);
  try {
    return reader.read.counts().accounts;
  } finally {
    reader.close();
  }
}

/** Where the sandbox's accounts differ from the export: every account created once, exactly, PROCESSED, with its records. */
function differences(data: E2eExport, accounts: SandboxAccount[], expected: ExpectedExport): string[] {
  const byNumber = new Map(accounts.map((account) => [account.number, account]));
  const sorted = (list: readonly string[] | undefined): string => JSON.stringify([...(list ?? [])].sort());
  // Every account created exactly as mapped from the whole export (customers, supply addresses, every field).
  const problems = payloadDifferences(accounts, expected);
  for (const number of data.valid) {
    const account = byNumber.get(number);
    const expected: Array<[string, string, string]> = [
      ['status', account?.status ?? 'absent', 'PROCESSED'],
      ['creates', String(account?.creates), '1'],
      ['notes', sorted(account?.notes), sorted(data.notes.get(number))],
      ['transactions', sorted(account?.transactions), sorted(data.transactions.get(number))],
      ['statements', sorted(account?.statements), sorted(data.statements.get(number))],
      [
        'payment instructions',
        sorted(account?.paymentInstructions),
        sorted([data.paymentInstructions.get(number)].filter((reference) => reference !== undefined)),
      ],
    ];
    for (const [what, got, want] of expected) if (got !== want) problems.push(`${number} ${what}: ${got}, not ${want}`);
  }
  return problems;
}
