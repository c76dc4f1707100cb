import { estimateExportAccounts } from '../common/export-size.js';
import type { LedgerSource } from '../common/ledger-source.js';
import { findExportFiles } from '../../sources/index.js';

// What the ledger alone cannot say after a push stopped while reading the export: the accounts of the export it never
// read. About as many as the last push's accounts file has lines (common/export-size.ts, as push's progress counts
// them) less the accounts the ledger holds. Only when that push did not finish: a finished push read the whole export.

export interface ExportNeverRead {
  /** The export directory the last push read. */
  dir: string;
  /** About how many accounts it holds: its accounts file's lines. */
  accounts: number;
  /** About how many of them no push has read. */
  never_read: number;
}

/** Null when the last push finished, or the export cannot be counted (gone, a JSON array, a shaped export's files). */
export async function exportNeverRead(ledger: LedgerSource): Promise<ExportNeverRead | null> {
  const dir = ledger.read.pushExportDirs().at(-1);
  if (dir === undefined || ledger.lastPush()?.status === 'finished') return null;
  const files = await findExportFiles(dir).catch(() => undefined);
  const accounts = files === undefined ? undefined : await estimateExportAccounts(files.files);
  if (accounts === undefined) return null;
  const held = Object.values(ledger.read.counts().accounts).reduce((total, n) => total + (n ?? 0), 0);
  return { dir, accounts, never_read: Math.max(0, accounts - held) };
}
