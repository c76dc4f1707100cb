import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { migrate } from '../cli/validate-helpers.js';
import { writeE2eExport } from './export.js';
import { push } from './helpers.js';

// External account numbers that cannot be addressed in a URL path (`.`, `..`, `/`, `\`, `?`, `#`, `%`, control
// characters) are refused by validation, located, with a stable code, and never reach the service: before, `..` was
// created, its status URL normalised away and the push waited until --wait-timeout.

let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'numbers-e2e-'));
  sandbox = await startSandbox({ processingMs: 20 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

const BAD = ['.', '..', 'BAD#4', 'BAD%2F2', 'BAD/1', 'BAD?3'];
const ACCOUNT = 'ACME,DOMESTIC,Someone,someone@example.org,1 High Street,York,YO1 7HH,GB,MONTHLY,1,false,ONLINE';

function insertAfterHeader(file: string, lines: string[]): void {
  const [header, ...rest] = readFileSync(file, 'utf8').split('\n');
  writeFileSync(file, [header, ...lines, ...rest].join('\n'));
}

describe('external account numbers a URL path cannot carry', () => {
  // Sorted, the export streams and the rows are found while accounts are sent; scattered, the files are sorted first
  // and the rows are found before the first account: either way they are named at the end and the good accounts land.
  it.each(['sorted', 'scattered'] as const)(
    '%s: are named by validate and push, at their lines, and never sent; the other accounts land',
    async (order) => {
      const data = writeE2eExport(join(root, order), 2, 'NUM', 'spec', { clean: true, order });
      // In number order ("." < "B" < "N") when the rest is sorted.
      insertAfterHeader(
        join(data.dir, 'accounts.csv'),
        BAD.map((number) => `${number},${ACCOUNT}`),
      );
      insertAfterHeader(join(data.dir, 'notes.csv'), ['..,a note for dot dot,2024-01-01T09:00:00Z']);
      const validate = migrate(['validate', data.dir, '--json']);
      expect(validate.code).toBe(5);
      const errors = (JSON.parse(validate.stdout) as { errors: Array<Record<string, unknown>> }).errors;
      expect(errors.map((error) => [error['file'], error['line'], error['code']])).toEqual([
        ...BAD.map((_, index) => ['accounts.csv', 2 + index, 'external_account_number_not_addressable']),
        ['notes.csv', 2, 'external_account_number_not_addressable'],
      ]);
      expect(errors[1]?.['message']).toBe(
        'external_account_number ".." is a dot path segment, which URLs remove. The service finds an account by its ' +
          'number in its URLs: an account of this number could be created but never found again, nor its records ' +
          'added. Give it a number without them.',
      );
      const pushed = await push(sandbox, data.dir, join(root, order, 'state'), ['--wait-timeout', '20']);
      expect(pushed.code, pushed.stderr).toBe(5);
      expect(pushed.stderr).toContain('the export has 7 problem(s) outside any account; those rows were not sent');
      expect(pushed.stderr).toContain(
        'accounts.csv:3 (external_account_number): external_account_number ".." is a dot',
      );
      expect(sandbox.inspect.account('ACME', 'NUM-0001')?.status).toBe('PROCESSED');
      expect(sandbox.inspect.account('ACME', 'NUM-0002')?.status).toBe('PROCESSED');
      for (const number of BAD) expect(sandbox.inspect.account('ACME', number), number).toBeUndefined();
    },
  );
});
