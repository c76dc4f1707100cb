import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContractFile } from '../../src/config/contract-file.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { obtainToken, send } from '../sandbox/helpers.js';
import { push, ROOT, writesReceived } from './helpers.js';
import { expectServiceHoldsExport } from './expect-export.js';
import { exportInMemory } from './oracle.js';

// A tenant's export pushed by the real binary into the sandbox rehearsing that tenant's contract
// (docs/real-platform.md "The tenant's contract"): it ends exact, what breaks the document is held back before
// anything is sent, and the tenant's own fields arrive as the export gives them.

const FAMILIES = [
  { family: 'flat-address', supplier: 'FERNLEIGH', accounts: 3 },
  { family: 'structured-address', supplier: 'WATTLE', accounts: 3 },
] as const;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'contract-e2e-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function rehearsal(family: string, supplier: string): Promise<RunningSandbox> {
  const file = join(ROOT, 'fixtures', 'contracts', family, 'openapi.yaml');
  return startSandbox({
    dialect: 'kraken',
    contract: await loadContractFile(file, file),
    suppliers: { [supplier]: 'Ongoing' },
    processingMs: 20,
  });
}

describe.each(FAMILIES)('a push of the $family fixture to the sandbox rehearsing its contract', (fixture) => {
  it('ends exact: every account once, as the export maps it, with every record', async () => {
    const sandbox = await rehearsal(fixture.family, fixture.supplier);
    try {
      const dir = join(ROOT, 'fixtures', 'contracts', fixture.family, 'export');
      const result = await push(sandbox, dir, join(root, `exact-${fixture.family}`));
      expect(result.code, result.stderr).toBe(0);
      const expected = await exportInMemory(dir);
      expect(expected.valid.size).toBe(fixture.accounts);
      expectServiceHoldsExport(sandbox.inspect.accounts(fixture.supplier), expected);
    } finally {
      await sandbox.close();
    }
  });
});

describe('tenant fields and tenant rules on the way to the platform', () => {
  it('a customer-level and a transaction-level tenant field reach the inspection endpoint as given', async () => {
    const sandbox = await rehearsal('flat-address', 'FERNLEIGH');
    try {
      const dir = join(ROOT, 'fixtures', 'contracts', 'flat-address', 'export');
      const result = await push(sandbox, dir, join(root, 'fields'));
      expect(result.code, result.stderr).toBe(0);
      const token = await obtainToken(sandbox.url, sandbox.apiKey);
      const answer = await send(`${sandbox.url}/_sandbox/accounts/FERNLEIGH/`, {
        method: 'GET',
        headers: { authorization: token },
      });
      const held = new Map(
        (answer.body as Array<Record<string, any>>).map((item) => [item['externalAccountNumber'], item]),
      );
      expect(held.get('FERN-0002')?.['payload'].customers[1].psr).toEqual([
        {
          need_code: 'HEARING',
          effective_from: '2024-01-15T09:30:00Z',
          additional_information: 'Prefers text messages',
        },
      ]);
      const transaction = held.get('FERN-0002')?.['transactions'][0];
      expect(transaction.data.to_prepay_meter_serial_number).toBe('21E0012345');
      expect(held.get('FERN-0001')?.['paymentInstructions'][0].extra).toEqual({ valid_from: '2024-02-02' });
    } finally {
      await sandbox.close();
    }
  });

  it('holds back what breaks the document before anything about it is sent; push --sandbox rehearses the contract', async () => {
    const dir = join(root, 'broken');
    cpSync(join(ROOT, 'fixtures', 'contracts', 'flat-address'), dir, { recursive: true });
    const transactions = join(dir, 'export', 'transactions.csv');
    writeFileSync(transactions, readFileSync(transactions, 'utf8').replace('CHARGE,METER_EXCHANGE_FEE,', 'CHARGE,,'));
    const sandbox = await rehearsal('flat-address', 'FERNLEIGH');
    try {
      const result = await push(sandbox, join(dir, 'export'), join(root, 'broken-state'));
      expect(result.code, result.stderr).toBe(5);
      expect(result.stdout).toMatch(/contract_required/);
      expect(sandbox.inspect.account('FERNLEIGH', 'FERN-0002')).toBeUndefined();
      expectServiceHoldsExport(sandbox.inspect.accounts('FERNLEIGH'), await exportInMemory(join(dir, 'export')));
      sandbox.inspect.resetLog();
      const rerun = await push(sandbox, join(dir, 'export'), join(root, 'broken-state'));
      expect(rerun.code, rerun.stderr).toBe(5);
      expect(writesReceived(sandbox)).toBe(0);
    } finally {
      await sandbox.close();
    }
    const builtIn = await push(
      { url: 'http://127.0.0.1:1', apiKey: 'unused' } as RunningSandbox,
      join(ROOT, 'fixtures', 'contracts', 'structured-address', 'export'),
      join(root, 'built-in'),
      ['--sandbox'],
    );
    expect(builtIn.code, builtIn.stderr).toBe(0);
  });
});
