import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger, LEDGER_FILE } from '../../../src/ledger/index.js';
import { openLedgerSource } from '../../../src/commands/common/ledger-source.js';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { writeOpsExport } from './ops-export.js';

// report.html as a person sees it: the real binary pushes an export with planted data errors and
// ERRORED accounts to a sandbox and writes the report; headless Chromium (Debian's package) opens
// the file and the test reads what is on screen. .ci/run installs Chromium; without it the test
// says so and is skipped.

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM)
  console.warn(`html-report.browser.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

let dir: string;
let sandbox: RunningSandbox;
let browser: Browser;
/** The planted export: its directory, and the accounts the platform ERRORED. */
let ops: ReturnType<typeof writeOpsExport>;

function migrate(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe.skipIf(!HAVE_CHROMIUM)('report.html in headless Chromium', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'html-report-'));
    sandbox = await startSandbox({ processingMs: 20 });
    ops = writeOpsExport(dir);
    const state = join(dir, 'state');
    const pushed = await migrate(['push', ops.dir, '--base-url', sandbox.url, '--state', state]);
    expect(pushed.code, pushed.stderr).toBe(5); // invalid accounts: a person must act
    const report = await migrate(['report', '--state', state, '--out', join(dir, 'report'), '--html']);
    expect(report.code, report.stderr).toBe(0);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('charts with a size, header totals equal to the ledger, no console error, no network request', async () => {
    const path = join(dir, 'report', 'report.html');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const html = readFileSync(path, 'utf8');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => requests.push(request.url()));
    const url = pathToFileURL(path).href;
    await page.goto(url);
    for (const id of ['funnel', 'over-time', 'errors']) {
      const box = await page.locator(`#${id} svg`).boundingBox();
      expect(box, id).not.toBeNull();
      expect(box!.width, id).toBeGreaterThan(100);
      expect(box!.height, id).toBeGreaterThan(20);
    }
    // The bars themselves are drawn: the first bar of the funnel has a width.
    const bar = await page.locator('#funnel rect').first().boundingBox();
    expect(bar!.width).toBeGreaterThan(10);
    const source = openLedgerSource(join(dir, 'state'));
    const counts = source.counts();
    source.close();
    const total = (values: Array<number | undefined>): number => values.reduce<number>((a, b) => a + (b ?? 0), 0);
    const shown = async (name: string): Promise<string> =>
      (await page.locator(`dd[data-total="${name}"]`).innerText()).replace(/,/g, '');
    expect(await shown('accounts')).toBe(String(total(Object.values(counts.accounts))));
    // One number for "done" on every surface: the ledger's, summary.json's, the headline's. OPS-0005 is done on the
    // platform but its payment instruction was refused: counted done, and said beside the number.
    expect(await shown('done')).toBe(String(counts.accounts.done ?? 0));
    const summary = JSON.parse(readFileSync(join(dir, 'report', 'summary.json'), 'utf8')) as {
      accounts: { done?: number };
    };
    expect(await shown('done')).toBe(String(summary.accounts.done));
    expect(await page.locator('.facts').innerText()).toContain('(1 with a refused record)');
    await expectCardsEqualCsvs(page, join(dir, 'report'));
    await expectRefusedAsFailures(page, 1);
    await expectNoTextClipped(page);
    await expectLabelsApart(page);
    expect(await page.locator('#errors').innerText()).toContain('account_creation_failed');
    await expect(page.locator('a[href="fix-data.csv"]').first().isVisible()).resolves.toBe(true);
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("each ERRORED account's row gives the command that shows it, and it runs as pasted, from any directory", async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(join(dir, 'report', 'report.html')).href);
    const state = join(dir, 'state');
    const commands = await page.locator('#needs-action td code').allInnerTexts();
    expect(commands.sort()).toEqual(
      ops.errored.map((number) => `migrate status ACME --state ${state} --account ${number}`).sort(),
    );
    expect(await page.locator('#retry-errored').innerText()).toBe(
      `migrate push ${ops.dir} --state ${state} --retry-errored`,
    );
    expect(await page.locator('body').innerText()).not.toContain('SUPPLIER');
    await page.close();
    // Pasted into a shell elsewhere (the key and the service's URL in the environment, as an operator's shell has them).
    const elsewhere = mkdtempSync(join(tmpdir(), 'pasted-'));
    try {
      for (const command of commands) {
        // Asynchronously: the sandbox answers from this process.
        const child = spawn('sh', ['-c', command.replace(/^migrate /, `"${process.execPath}" "${BIN}" `)], {
          cwd: elsewhere,
          env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, MIGRATE_BASE_URL: sandbox.url, NO_COLOR: '1' },
        });
        const run = { stdout: '', stderr: '' };
        child.stdout.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
        const code = await new Promise((resolve) => child.on('close', resolve));
        const number = command.split(' ').at(-1)!;
        // The account's story told (exit 0), not a usage error (2) of a command that does not parse.
        expect(code, `${command}: ${run.stderr}`).toBe(0);
        expect(run.stdout, `${command}: ${run.stderr}`).toContain(number);
        expect(run.stdout, command).toMatch(/ERRORED/);
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

type Row = Record<string, string>;
const csv = (out: string, name: string): Row[] =>
  parse(readFileSync(join(out, name), 'utf8'), { columns: true }) as Row[];

/** The header's numbers are the CSVs' own: accounts, done, % complete, accounts needing action, fix-data rows. */
async function expectCardsEqualCsvs(page: Page, out: string): Promise<void> {
  const shown = async (name: string): Promise<string> =>
    (await page.locator(`[data-total="${name}"]`).first().innerText()).replace(/,/g, '');
  const accounts = csv(out, 'accounts.csv');
  const key = (row: Row): string => `${row['import_supplier']}/${row['external_account_number']}`;
  // An account with a record the service refused is done (its refused record a failure, said beside the number).
  const done = accounts.filter((row) => row['state'] === 'done').length;
  const fix = csv(out, 'fix-data.csv');
  expect(await shown('accounts')).toBe(String(accounts.length));
  expect(await shown('done')).toBe(String(done));
  expect(await shown('complete')).toBe(`${(Math.floor((done / accounts.length) * 1000) / 10).toFixed(1)}%`);
  expect(await shown('fix-rows')).toBe(String(fix.length));
  const needing = new Set(fix.map(key));
  expect(await shown('attention')).toBe(String(needing.size));
}

/**
 * Records the service refused are failures: a red segment on their kind's bar, said as "N failed"; the funnel's done
 * bar counts their accounts done and says how many have a refused record; ERRORED accounts point to a check and
 * --retry-errored, never to a data fix.
 */
async function expectRefusedAsFailures(page: Page, refused: number): Promise<void> {
  const segments = page.locator('#records rect.failed');
  expect(await segments.count()).toBe(1);
  expect((await segments.first().boundingBox())!.width).toBeGreaterThanOrEqual(2);
  expect(await page.locator('#records').innerText()).toContain(`${refused} failed`);
  expect(await page.locator('#funnel rect.failed').count()).toBe(0);
  expect(await page.locator('#funnel').innerText()).toContain(`(${refused} with a refused record)`);
  const pace = await page.locator('.complete + .track + p').innerText();
  expect(pace).toContain('ERRORED on the platform (to check, then push --retry-errored)');
  expect(pace).not.toMatch(/ERRORED, whose data must be fixed/);
}

/** Every text of every bar chart lies inside its chart: no label, value or example is clipped. */
async function expectNoTextClipped(page: Page): Promise<void> {
  for (const id of ['funnel', 'records', 'errors']) {
    const chart = (await page.locator(`#${id} svg`).boundingBox())!;
    for (const text of await page.locator(`#${id} svg text`).all()) {
      const box = (await text.boundingBox())!;
      const what = `${id}: ${await text.textContent()}`;
      expect(box.x, what).toBeGreaterThanOrEqual(chart.x - 0.5);
      expect(box.x + box.width, what).toBeLessThanOrEqual(chart.x + chart.width + 0.5);
    }
  }
}

/** No two x labels of a chart overlap, and each stays inside its chart. */
async function expectLabelsApart(page: Page): Promise<number> {
  let drawn = 0;
  for (const id of ['over-time', 'runs']) {
    const chart = await page.locator(`#${id} svg`).boundingBox();
    expect(chart, id).not.toBeNull();
    const boxes = [];
    for (const label of await page.locator(`#${id} text.x-label`).all()) boxes.push(await label.boundingBox());
    expect(boxes.length, id).toBeGreaterThan(0);
    drawn += boxes.length;
    for (const [index, box] of boxes.entries()) {
      expect(box, id).not.toBeNull();
      expect(box!.x, `${id} label ${index} inside`).toBeGreaterThanOrEqual(chart!.x);
      expect(box!.x + box!.width, `${id} label ${index} inside`).toBeLessThanOrEqual(chart!.x + chart!.width + 0.5);
      const next = boxes[index + 1];
      if (next) expect(box!.x + box!.width, `${id} labels ${index} and ${index + 1} apart`).toBeLessThan(next.x);
    }
  }
  return drawn;
}

const RUNS = 200;

/**
 * A ledger of a campaign of 200 cron runs: 25 a night, every 20 minutes from 22:00 UTC, over the 8
 * nights before today; each finishes a few accounts. Beside them: invalid accounts with two problems
 * each, an ERRORED one, a done one whose payment instruction was refused, and accounts not sent yet.
 */
function campaignLedger(state: string): void {
  const ledger = Ledger.open(state);
  let number = 0;
  const account = (accountState: 'staged' | 'invalid' | 'errored' | 'processed'): number =>
    ledger.insertAccount(
      {
        importSupplier: 'ACME',
        externalAccountNumber: `C-${String((number += 1)).padStart(5, '0')}`,
        state: accountState,
        payload: '{}',
        fingerprint: `f${number}`,
        originFile: 'accounts.csv',
        originLine: number + 1,
        origins: null,
      },
      { step: 'stage' },
    );
  for (let run = 1; run <= RUNS; run += 1) {
    ledger.startRun('push', {});
    ledger.batch(() => {
      for (let k = 0; k < (run % 9 === 4 ? 0 : 1 + (run % 5)); k += 1)
        ledger.updateAccountNow(account('processed'), { state: 'done' }, { step: 'post_import', from: 'processed' });
    });
    ledger.finishRun(run, 'finished', run % 40 === 0 ? 3 : 1, {});
  }
  ledger.batch(() => {
    for (let k = 0; k < 6; k += 1) {
      const id = account('invalid');
      const issue = {
        message: 'bad',
        attr: 'billing_email',
        file: 'accounts.csv',
        line: k + 2,
        source: 'local' as const,
      };
      ledger.replaceIssues(id, [
        { ...issue, code: 'billing_email_not_valid', column: 'billing_email' },
        { ...issue, code: 'invalid_phone_number', file: 'customers.csv', column: 'mobile' },
      ]);
      // A long file name, as a dated cohort's export has: the top error's example must not clip.
      const file = 'accounts_2026-11-26_cohort-07_full_export.csv';
      ledger.updateAccountNow(id, { error: { code: 'billing_email_not_valid', detail: 'bad', file } });
    }
    ledger.updateAccountNow(account('errored'), { error: { code: 'account_creation_failed', detail: 'ERRORED' } });
    const refused = account('processed');
    ledger.updateAccountNow(refused, { state: 'done' }, { step: 'post_import', from: 'processed' });
    const item = ledger.insertItem({
      accountId: refused,
      kind: 'payment_instruction',
      naturalKey: 'FAIL-1',
      body: '{}',
      fingerprint: 'fi',
      state: 'failed',
      originFile: 'payment_instructions.csv',
      originLine: 2,
    });
    ledger.updateItemsNow([item], { error: { code: 'payment_vendor_failed', detail: 'no' } });
    for (let k = 0; k < 300; k += 1) account('staged');
  });
  ledger.close();
  const db = new Database(join(state, LEDGER_FILE));
  const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const setRun = db.prepare('UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?');
  const setEvents = db.prepare('UPDATE events SET at = ? WHERE run_id = ?');
  for (let run = 1; run <= RUNS; run += 1) {
    const night = Math.floor((run - 1) / 25);
    const start = today - (8 - night) * 86_400_000 - 2 * 3_600_000 + ((run - 1) % 25) * 20 * 60_000;
    setRun.run(new Date(start).toISOString(), new Date(start + 4 * 60_000).toISOString(), run);
    setEvents.run(new Date(start + 2 * 60_000).toISOString(), run);
  }
  db.close();
}

describe.skipIf(!HAVE_CHROMIUM)('report.html of a 200-run campaign in headless Chromium', () => {
  let campaignDir: string;
  let campaignBrowser: Browser;

  beforeAll(async () => {
    campaignDir = mkdtempSync(join(tmpdir(), 'html-campaign-'));
    campaignLedger(join(campaignDir, 'state'));
    const child = spawn(process.execPath, [BIN, 'report', '--state', 'state', '--out', 'report', '--html'], {
      cwd: campaignDir,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    campaignBrowser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await campaignBrowser?.close();
    rmSync(campaignDir, { recursive: true, force: true });
  });

  it('stays readable: runs grouped into columns that show, labels apart, per night over time', async () => {
    const page = await campaignBrowser.newPage({ viewport: { width: 1000, height: 800 } });
    await page.goto(pathToFileURL(join(campaignDir, 'report', 'report.html')).href);
    expect(await expectLabelsApart(page)).toBeGreaterThan(6);
    const columns = await page.locator('#runs rect').all();
    expect(columns.length).toBeLessThanOrEqual(40);
    expect(columns.length).toBeGreaterThanOrEqual(20);
    for (const column of columns) expect((await column.boundingBox())!.width).toBeGreaterThanOrEqual(4);
    expect(await page.locator('h2', { hasText: 'consecutive runs a column' }).count()).toBe(1);
    // Eight nights (cut at the quietest hour: each night one column) and today.
    expect(await page.locator('h2', { hasText: 'Accounts done over time, per day' }).count()).toBe(1);
    const nights = await page.locator('#over-time rect').all();
    expect(nights.length).toBeGreaterThanOrEqual(8);
    expect(nights.length).toBeLessThanOrEqual(10);
    expect(await page.locator('dd[data-total="runs"]').innerText()).toBe('200');
    await page.close();
  });

  it("shows the CSVs' numbers, % complete, the pace and an estimated finish", async () => {
    const page = await campaignBrowser.newPage({ viewport: { width: 1000, height: 800 } });
    await page.goto(pathToFileURL(join(campaignDir, 'report', 'report.html')).href);
    await expectNoTextClipped(page);
    await expectCardsEqualCsvs(page, join(campaignDir, 'report'));
    expect(Number(await page.locator('[data-total="fix-rows"]').innerText())).toBe(6 * 2 + 1 + 1);
    expect(await page.locator('dd[data-total="attention"]').innerText()).toBe('8');
    expect(await page.locator('[data-total="pace"]').innerText()).toMatch(/^\d+$/);
    expect(await page.locator('[data-total="finish"]').innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(await page.locator('#recent-runs tbody tr').count()).toBe(10);
    await page.close();
  });
});
