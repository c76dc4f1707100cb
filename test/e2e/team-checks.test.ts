import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { copyLegacyCis, FILES, plant, readLegacyCis } from './legacy-cis-files.js';
import { runMigrate } from './run-push.js';

// The team's own checks and the meaning checks nobody should have to write, through the real binary on
// fixtures/legacy-cis: a check view's error is named at its legacy line and holds its account back (validate counts
// it invalid, push sends nothing of it); a warning is listed and the account is sent as it is.

const SUPPLIER = 'THISTLE';
/** A dual-fuel account: its two supply point rows. */
const POSTCODE = { account: '00182772', lines: [17, 60] };
/** The account of the note at line 5 of the notes file (the check names no account: found by the note's line). */
const NOTE = { account: '00003950', line: 5 };
/** A single supply point account whose second holder is planted as the first again. */
const TWICE = { account: '00138378', line: 27 };

const VACANT = [...readLegacyCis()]
  .filter(([, account]) => account.occupier && account.status === 'LIVE')
  .map(([number]) => number);

const CHECKS = `
CREATE VIEW check_vacant AS
SELECT ACCOUNT_NO AS external_account_number, _file, _line, 'a vacant property, billed to The Occupier' AS message,
  'warning' AS severity
FROM cis_accounts WHERE ACCOUNT_STATUS = 'LIVE' AND VACANT_FLAG = 'Y';

CREATE VIEW check_complaint AS
SELECT _file, _line, 'a note speaks of a complaint: settle it before the account moves' AS message
FROM cis_notes WHERE "Note Text" LIKE '%complaint%';
`;

interface Row {
  file: string;
  line: number;
  external_account_number: string;
  code: string;
  message: string;
}

let root: string;
let dir: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'team-checks-'));
  dir = copyLegacyCis(join(root, 'export'));
  for (const line of POSTCODE.lines) plant(dir, FILES.accounts, line, 'SUPPLY_POSTCODE', 'LS6 8N');
  plant(dir, FILES.notes, NOTE.line, 'Note Text', 'Customer raised a complaint about the estimate');
  plant(dir, FILES.accounts, TWICE.line, 'CUST2_FORENAME', 'Priya');
  plant(dir, FILES.accounts, TWICE.line, 'CUST2_DOB', '03/05/1959');
  appendFileSync(join(dir, 'shape.sql'), CHECKS);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the team's own checks", () => {
  it('validate names each error at its legacy line with its code and message, and counts its account invalid', async () => {
    const result = await runMigrate(['validate', dir, '--json']);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { accounts: { invalid: number }; errors: Row[]; warnings?: Row[] };
    const checks = report.errors.filter((row) => row.code.startsWith('check_'));
    expect(checks.map((row) => [row.code, row.file, row.line, row.external_account_number, row.message])).toEqual([
      [
        'check_complaint',
        FILES.notes,
        NOTE.line,
        NOTE.account,
        'a note speaks of a complaint: settle it before the account moves',
      ],
      ...POSTCODE.lines.map((line) => [
        'check_supply_postcode',
        FILES.accounts,
        line,
        POSTCODE.account,
        'SUPPLY_POSTCODE "LS6 8N" is not a UK postcode',
      ]),
    ]);
    // The two accounts the errors are about, no other: warnings hold nothing back.
    expect(report.accounts.invalid).toBe(2);
    expect(report.errors.every((row) => [POSTCODE.account, NOTE.account].includes(row.external_account_number))).toBe(
      true,
    );
    const warnings = (report.warnings ?? []).map((row) => [row.code, row.external_account_number, row.line]);
    expect(warnings).toEqual(
      expect.arrayContaining([
        ['duplicate_customer', TWICE.account, TWICE.line],
        ...VACANT.map((account) => ['check_vacant', account, expect.any(Number) as number]),
      ]),
    );
    expect(warnings.filter(([code]) => code === 'duplicate_customer')).toHaveLength(2);
  });

  it('validate prints the errors at their lines and the warnings apart', async () => {
    const result = await runMigrate(['validate', dir]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stdout).toContain(`${FILES.accounts}:60  check_supply_postcode  SUPPLY_POSTCODE "LS6 8N"`);
    expect(result.stdout).toMatch(/Warnings \(the accounts are sent as they are\): \d+/);
    expect(result.stdout).toContain(`${FILES.accounts}:${TWICE.line} customers.1  duplicate_customer`);
  });

  describe('push', () => {
    let sandbox: RunningSandbox;
    beforeAll(async () => {
      sandbox = await startSandbox({ suppliers: { [SUPPLIER]: 'Ongoing' }, processingMs: 0 });
    });
    afterAll(async () => sandbox.close());

    it('sends nothing of an account a check holds back, and sends the accounts it only warns about', async () => {
      const pushed = await push(sandbox, dir, join(root, 'state'));
      expect(pushed.code, pushed.stderr).toBe(5);
      expect(sandbox.inspect.account(SUPPLIER, POSTCODE.account)).toBeUndefined();
      expect(sandbox.inspect.account(SUPPLIER, NOTE.account)).toBeUndefined();
      expect(VACANT.length).toBeGreaterThan(0);
      for (const account of [...VACANT, TWICE.account])
        expect(sandbox.inspect.account(SUPPLIER, account), account).toBeDefined();
    });
  });
});
