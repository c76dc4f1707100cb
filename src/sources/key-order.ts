/**
 * The order of external account numbers everywhere: SQLite's BINARY collation (UTF-8 bytes, i.e. code points), so
 * that the key scan, the streaming join, the external sort and the scratch join agree. UTF-16 order differs from it
 * only where a surrogate (a code point above U+FFFF) meets U+E000-U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  // Where either key has no unit from U+D800 up (account numbers are ASCII), the orders agree.
  if (!HIGH_UNIT.test(a) || !HIGH_UNIT.test(b)) return a < b ? -1 : 1;
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a.charCodeAt(index) === b.charCodeAt(index)) index += 1;
  if (index === length) return a.length - b.length;
  return codePointRank(a.charCodeAt(index)) - codePointRank(b.charCodeAt(index));
}

const HIGH_UNIT = /[\ud800-\uffff]/;
const codePointRank = (unit: number): number => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit);

/**
 * The external account number a cell holds: its text without surrounding white space, in Unicode NFC (composed)
 * form, so that an NFC and an NFD spelling of one number are one account, sorted, joined, stored and sent as the NFC
 * one (docs/export-format.md "External account numbers"); none when empty.
 */
export function accountKeyOf(text: string): string | undefined {
  const key = text.trim();
  if (key === '') return undefined;
  return ASCII.test(key) ? key : key.normalize('NFC');
}

// eslint-disable-next-line no-control-regex -- every ASCII character, the common case NFC leaves as it is
const ASCII = /^[\x00-\x7f]*$/;
