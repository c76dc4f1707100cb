import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerSource } from '../../src/report/ledger-source.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeOpsExport } from './ops-export.js';

// report.html as a person sees it: the real binary pushes an export with planted data errors and
// ERRORED accounts to a sandbox and writes the report; headless Chromium (Debian's package) opens
// the file and the test reads what is on screen. .ci/run installs Chromium; without it the test
// says so and is skipped.

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM)
  console.warn(`html-report.browser.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

let dir: string;
let sandbox: RunningSandbox;
let browser: Browser;

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
    const ops = writeOpsExport(dir);
    const state = join(dir, 'state');
    const pushed = await migrate(['push', ops.dir, '--base-url', sandbox.url, '--state', state]);
    expect(pushed.code, pushed.stderr).toBe(1);
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
    expect(await shown('done')).toBe(String(counts.accounts.done ?? 0));
    expect(await shown('attention')).toBe(String(total([counts.accounts.invalid, counts.accounts.errored])));
    expect(await page.locator('#errors').innerText()).toContain('account_creation_failed');
    await expect(page.locator('a[href="fix-data.csv"]').first().isVisible()).resolves.toBe(true);
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });
});
