import { createReadStream } from 'node:fs';
import type { ExportFile } from '../../sources/index.js';

// About how many accounts an export holds, before it is read: the lines of its accounts file,
// counted as bytes (no decoding, no parsing), so that progress can say "24% of the export read"
// and extrapolate the run's work while the export is still being staged (docs/complete-or-not.md
// "Sending while the export is read"). An estimate: a quoted CSV value spanning lines counts once per line, and
// a JSON array file cannot be counted without parsing it (undefined). The real count replaces
// it once staging has read everything.

const NEWLINE = 0x0a;

/** Lines of the accounts file less its header: about the accounts of the export; undefined for JSON or unreadable. */
export async function estimateExportAccounts(
  files: readonly ExportFile[],
  signal?: AbortSignal,
): Promise<number | undefined> {
  const accounts = files.find((file) => file.kind === 'accounts');
  if (accounts === undefined || accounts.format === 'json') return undefined;
  try {
    const { newlines, last } = await countNewlines(accounts.absolutePath, signal);
    const lines = newlines + (last !== undefined && last !== NEWLINE ? 1 : 0);
    return Math.max(0, accounts.format === 'csv' ? lines - 1 : lines);
  } catch {
    // An estimate only: the read that stages the export reports what is wrong with the file.
    return undefined;
  }
}

async function countNewlines(path: string, signal?: AbortSignal): Promise<{ newlines: number; last?: number }> {
  let newlines = 0;
  let last: number | undefined;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20, ...(signal ? { signal } : {}) })) {
    const bytes = chunk as Buffer;
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) newlines += 1;
    if (bytes.length > 0) last = bytes[bytes.length - 1];
  }
  return last === undefined ? { newlines } : { newlines, last };
}
