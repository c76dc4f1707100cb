import { describe, expect, it } from 'vitest';
import { snakeCaseKeys } from '../../../src/commands/push/json-keys.js';

describe('snakeCaseKeys: the key style of every --json document', () => {
  it('turns camelCase field names into snake_case at any depth, in objects and arrays', () => {
    expect(
      snakeCaseKeys({
        exitCode: 1,
        staged: { changedAfterImport: 2, omittedValues: 0 },
        topErrors: [{ code: 'invalid_phone_number', count: 3 }],
        notRead: [{ name: 'readMe.txt', reason: 'not an export file' }],
        already_snake: null,
      }),
    ).toEqual({
      exit_code: 1,
      staged: { changed_after_import: 2, omitted_values: 0 },
      top_errors: [{ code: 'invalid_phone_number', count: 3 }],
      not_read: [{ name: 'readMe.txt', reason: 'not an export file' }],
      already_snake: null,
    });
  });

  it('keeps the keys of maps that hold data, converting only their field name', () => {
    const counts = { ACME: { inPlan: 1 }, 'ACC-7': 2 };
    expect(snakeCaseKeys({ perAccount: counts, totals: { inPlan: 3 } }, new Set(['perAccount']))).toEqual({
      per_account: counts,
      totals: { in_plan: 3 },
    });
  });

  it('leaves values alone: strings, numbers, booleans and null', () => {
    expect(snakeCaseKeys('stateDir')).toBe('stateDir');
    expect(snakeCaseKeys([1, true, null])).toEqual([1, true, null]);
  });
});
