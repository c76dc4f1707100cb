// Date formats a mapping file may declare (docs/export-format.md "Values": other input formats are
// mapping-file options; an ambiguous or impossible date is an error, never a guess). Tokens:
// YYYY, MM, M, DD, D and, for datetimes, HH, mm, ss. Two-digit years are refused: the century
// would be a guess.

export interface DateFormat {
  source: string;
  regex: RegExp;
  order: string[];
}

const TOKENS: Array<[string, string]> = [
  ['YYYY', '(\\d{4})'],
  ['MM', '(\\d{2})'],
  ['DD', '(\\d{2})'],
  ['HH', '(\\d{2})'],
  ['mm', '(\\d{2})'],
  ['ss', '(\\d{2})'],
  ['M', '(\\d{1,2})'],
  ['D', '(\\d{1,2})'],
];

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Compiles a format, or says what is wrong with it. */
export function parseDateFormat(source: string, withTime: boolean): { format?: DateFormat; problem?: string } {
  if (/YY/.test(source) && !/YYYY/.test(source))
    return { problem: `"${source}": two-digit years are ambiguous; use YYYY` };
  let regex = '';
  const order: string[] = [];
  for (let rest = source; rest.length > 0;) {
    const token = TOKENS.find(([name]) => rest.startsWith(name));
    if (token) {
      regex += token[1];
      order.push(token[0].charAt(0));
      rest = rest.slice(token[0].length);
    } else {
      regex += escape(rest.charAt(0));
      rest = rest.slice(1);
    }
  }
  const has = (letter: string): boolean => order.includes(letter);
  if (!has('Y') || !has('M') || !has('D'))
    return { problem: `"${source}" needs a year (YYYY), a month (MM or M) and a day (DD or D)` };
  if (new Set(order).size !== order.length) return { problem: `"${source}" repeats a token` };
  if (withTime && !has('H')) return { problem: `"${source}" needs an hour (HH) for a datetime format` };
  if (!withTime && (has('H') || has('m') || has('s')))
    return { problem: `"${source}" has a time; use datetime_format for datetimes` };
  return { format: { source, regex: new RegExp(`^${regex}$`), order } };
}

function pad(value: string): string {
  return value.padStart(2, '0');
}

/**
 * The `YYYY-MM-DD` (and `THH:mm:ss` when the format has a time) a value means in a format, or undefined when it does
 * not match.
 */
export function applyDateFormat(format: DateFormat, value: string): string | undefined {
  const match = format.regex.exec(value);
  if (!match) return undefined;
  const part: Record<string, string> = {};
  format.order.forEach((letter, index) => {
    part[letter] = match[index + 1] ?? '';
  });
  const day = `${part['Y']}-${pad(part['M'] ?? '')}-${pad(part['D'] ?? '')}`;
  if (part['H'] === undefined) return day;
  return `${day}T${pad(part['H'])}:${pad(part['m'] ?? '00')}:${pad(part['s'] ?? '00')}`;
}
