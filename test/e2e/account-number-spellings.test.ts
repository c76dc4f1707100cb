import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { migrate } from '../cli/validate-helpers.js';
import { push, ROOT, SAMPLE_OPEN_PERIOD } from './helpers.js';

// An NFC and an NFD spelling of one external account number are one account (docs/export-format.md "External
// account numbers"): validate and push name the lines written otherwise, and the account, its customer and its notes
// reach the service under the NFC spelling. Before, the NFD lines were another account's (records of an account not
// in the export) and the notes went to a number the platform does not know.

const NFC = 'SAMPLE-M\u00dc1';
const NFD = 'SAMPLE-MU\u03081';
const NFD_SHOWN = 'SAMPLE-MU<U+0308>1';

let root: string;
let exportDir: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'spellings-'));
  exportDir = join(root, 'export');
  cpSync(join(ROOT, 'fixtures', 'sample'), exportDir, { recursive: true });
  const rewrite = (name: string, from: string, to: string): void => {
    const file = join(exportDir, name);
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(from, to));
  };
  rewrite('accounts.csv', 'SAMPLE-0002,', `${NFC},`);
  for (const name of ['customers.csv', 'supply_addresses.csv', 'transactions.csv', 'payment_instructions.csv'])
    rewrite(name, 'SAMPLE-0002,', `${NFD},`);
  rewrite('notes.ndjson', '"SAMPLE-0002"', `"${NFD}"`);
  sandbox = await startSandbox({ processingMs: 20, openPeriodStart: SAMPLE_OPEN_PERIOD });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

describe('account numbers in NFC and NFD', () => {
  it('validate: one account, the lines written in NFD named', () => {
    const run = migrate(['validate', exportDir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Account numbers written in another Unicode form than NFC on ');
    expect(run.stdout).toContain(`  customers.csv:3 ${NFD_SHOWN} read as ${NFC}`);
    expect(run.stdout).toContain(`  notes.ndjson:1 ${NFD_SHOWN} read as ${NFC}`);
    expect(run.stdout).not.toContain('not in this export');
    expect(run.stdout).toContain('50 account(s): 50 valid');
  });

  it('push: the account and its records land under the NFC number, the lines named', async () => {
    const run = await push(sandbox, exportDir, join(root, 'state'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`migrate:   notes.ndjson:1 ${NFD_SHOWN} read as ${NFC}`);
    const numbers = sandbox.inspect.accounts('ACME').map((account) => account.externalAccountNumber);
    expect(numbers).toContain(NFC);
    expect(numbers).not.toContain(NFD);
    const account = sandbox.inspect.accounts('ACME').find((entry) => entry.externalAccountNumber === NFC);
    expect(account?.notes.length).toBeGreaterThan(0);
    expect(JSON.stringify(account?.payload)).not.toContain(NFD);
  });
});
