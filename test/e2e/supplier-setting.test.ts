import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push, ROOT, SAMPLE_OPEN_PERIOD } from './helpers.js';

// A configured setting is never a data error: the import supplier of an account's records is the account's (its
// accounts.csv cell, else --supplier, MIGRATE_SUPPLIER or the mapping file's import_supplier). An export whose
// supplier code is only in accounts.csv sends its payment instructions with that supplier, instead of holding back
// every account that has one with the schema's raw "expected string, received undefined".
let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'supplier-setting-'));
  sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

/** The sample export with payment_instructions.csv's import_supplier column cut. */
function sampleWithoutInstructionSupplier(): { dir: string; references: Map<string, string> } {
  const dir = join(root, 'export');
  cpSync(join(ROOT, 'fixtures', 'sample'), dir, { recursive: true });
  const file = join(dir, 'payment_instructions.csv');
  const [header, ...rows] = readFileSync(file, 'utf8').trimEnd().split('\n');
  expect(header).toBe('external_account_number,import_supplier,vendor,reference,type');
  const cut = (line: string): string =>
    line
      .split(',')
      .filter((_, index) => index !== 1)
      .join(',');
  writeFileSync(file, `${[header!, ...rows].map(cut).join('\n')}\n`);
  return { dir, references: new Map(rows.map((row) => [row.split(',')[0]!, row.split(',')[3]!])) };
}

describe('records without a supplier of their own', () => {
  it("payment instructions take their account's supplier from accounts.csv: every one sent, exit 0", async () => {
    const { dir, references } = sampleWithoutInstructionSupplier();
    const run = await push(sandbox, dir, join(root, 'state'), ['--concurrency', '4']);
    expect(run.stderr).not.toContain('expected string, received undefined');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(references.size).toBe(17);
    for (const [number, reference] of references)
      expect(sandbox.inspect.account('ACME', number)?.paymentInstructions.map((pi) => pi.reference)).toEqual([
        reference,
      ]);
  });
});
