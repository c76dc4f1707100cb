import type { Options } from 'csv-stringify';

// Every CSV the tool writes is meant to be opened in a spreadsheet, and some of its text comes
// from the export or the service (external account numbers, note bodies in record keys, column
// names, messages). A text cell starting with = + - @ (or a tab or carriage return, which some
// spreadsheets skip before reading a formula) would be run as a formula: OWASP's advice on CSV
// injection is to prefix it with a single quote, so the spreadsheet shows it as text.

const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal number ("-5", "+1.25"): read as that number, nothing in it can be a formula. */
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/** A text cell as a spreadsheet must read it: prefixed with `'` where it could start a formula. */
export function spreadsheetSafe(value: string): string {
  return FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
}

/**
 * csv-stringify's options for every CSV file the tool writes: only text cells are escaped (a
 * number stays a number, a negative amount included).
 */
export function spreadsheetCsvOptions(columns: readonly string[], header: boolean): Options {
  return { header, columns: [...columns], cast: { string: (value) => spreadsheetSafe(value) } };
}
