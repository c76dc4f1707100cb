import { describe, expect, it } from 'vitest';
import { looseKey, NearKeys } from '../../src/intake/near-keys.js';

// Orphan records whose number matches an account but for spaces, leading zeros or case (a spreadsheet's doing),
// found whichever of the two comes first in the export's order.

const at = (file: string, line: number) => ({ file, line });

describe('near keys', () => {
  it('sets aside spaces, leading zeros and case, never other differences', () => {
    expect(looseKey(' 0012345 ')).toBe('12345');
    expect(looseKey('ACC-001')).toBe('acc-001');
    expect(looseKey('000')).toBe('0');
    expect(looseKey('12346')).not.toBe(looseKey('12345'));
  });

  it('pairs an orphan with the account it nearly names, before or after it', () => {
    const near = new NearKeys();
    near.account('0012345', at('accounts.csv', 17));
    near.orphan('12345', at('notes.csv', 4));
    near.orphan('0000777', at('notes.csv', 9));
    near.account('777', at('accounts.csv', 30));
    near.orphan('acc-9', at('transactions.csv', 2));
    near.account('ACC-9', at('accounts.csv', 40));
    near.orphan('99', at('notes.csv', 12));
    near.account('98', at('accounts.csv', 50));
    expect(near.found.map((pair) => [pair.orphan.number, pair.orphan.origin.line, pair.account.number])).toEqual([
      ['12345', 4, '0012345'],
      ['0000777', 9, '777'],
      ['acc-9', 2, 'ACC-9'],
    ]);
  });
});
