import { previewRequests, type PreviewOptions } from '../../api/preview.js';
import { UsageError, visibleText } from '../../errors.js';
import type { ExportEntry, Origin } from '../../intake/index.js';
import type { ShownRow, ShownRows } from '../../intake/shown-rows.js';

// `validate --show ACCOUNT[,ACCOUNT...]`: for each chosen account, its rows as the export holds them (file:line and raw
// values), the records a shape made of them, and the requests push would send, built and serialised by the client's
// own code (api/preview.ts), so that a wrong sign or a lost holder is seen before anything is sent. Every value is
// printed terminal-safe: control characters are escaped, never written raw.

export function showKeysOf(text: string): string[] {
  const keys = [...new Set(text.split(',').map((key) => key.trim()))].filter((key) => key !== '');
  if (keys.length === 0)
    throw new UsageError('--show: give one or more external account numbers, separated by commas.', 'show_empty');
  return keys;
}

/** Keeps the entries of the chosen accounts as validate reads the export. */
export class ShowCollector {
  readonly entries = new Map<string, ExportEntry>();
  readonly #keys: ReadonlySet<string>;

  constructor(readonly keys: readonly string[]) {
    this.#keys = new Set(keys);
  }

  take(entry: ExportEntry): void {
    const number = entry.kind === 'account' ? entry.account.externalAccountNumber : entry.items.externalAccountNumber;
    if (this.#keys.has(number)) this.entries.set(number, entry);
  }

  /** Every file and line the chosen accounts' records come from. */
  origins(): Origin[] {
    return [...this.entries.values()].flatMap(originsOf);
  }
}

function originsOf(entry: ExportEntry): Origin[] {
  const items = entry.kind === 'account' ? entry.account : entry.items;
  const origins = entry.kind === 'account' ? Object.values(entry.account.origins) : [];
  for (const list of [items.notes, items.transactions, items.statements, items.paymentInstructions])
    origins.push(...list.map((item: { origin: Origin }) => item.origin));
  return origins;
}

function rowText(row: ShownRow): string {
  const values = row.values.map(([column, value]) => `${column}=${value === null ? 'NULL' : JSON.stringify(value)}`);
  const what = row.what ? ` (${row.what})` : '';
  return `    ${row.file}:${row.line}${what}\n${values.map((value) => `      ${value}\n`).join('')}`;
}

function bodyText(body: string): string {
  return JSON.stringify(JSON.parse(body), null, 2)
    .split('\n')
    .map((line) => `      ${line}\n`)
    .join('');
}

export function renderShow(collector: ShowCollector, rows: ShownRows, options: PreviewOptions): string {
  let text = '';
  for (const key of collector.keys) {
    const entry = collector.entries.get(key);
    text += `\nAccount ${key}\n`;
    if (!entry) {
      text += '  not in this export (no record of it was read).\n';
      continue;
    }
    const lines = new Set(originsOf(entry).map((origin) => `${origin.file}:${origin.line}`));
    const mine = (row: ShownRow): boolean => lines.has(`${row.file}:${row.line}`);
    // The rows its records carry or name (`_rows`), and the account's other legacy rows (those holding its number as a
    // whole cell).
    const its = (row: ShownRow): boolean =>
      mine(row) || row.account === key || row.values.some(([, value]) => value === key);
    text += '  rows read:\n' + rows.legacy.filter(its).map(rowText).join('');
    const shaped = rows.shaped.filter(mine);
    if (shaped.length > 0) text += '  records the shape made of them:\n' + shaped.map(rowText).join('');
    const items = entry.kind === 'account' ? entry.account : entry.items;
    const account = entry.kind === 'account' ? entry.account : undefined;
    const requests = previewRequests({ ...items, payload: account?.payload }, options);
    text += '  requests push would send:\n';
    for (const request of requests) {
      const body = request.body === undefined ? `      not sent: ${request.refused ?? ''}\n` : bodyText(request.body);
      text += `    ${request.method} ${request.path}\n${body}`;
    }
    const problems = account?.issues ?? [];
    if (problems.length > 0)
      text +=
        `  held back: ${problems.length} problem(s)\n` +
        problems
          .map((issue) => `    ${issue.file}:${issue.line} ${issue.attr ?? ''}  ${issue.code}  ${issue.message}\n`)
          .join('');
  }
  return visibleText(text);
}
