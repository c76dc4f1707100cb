import { closeSync, lstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { classifyFileName } from '../../sources/kinds.js';
import { refuseInsideExport } from '../../output/output-file.js';

// Where `migrate report` may write (docs/operators-guide.md "Reading the report"): never into an export directory
// (its own accounts.csv has an export's name), and never over a file it did not write. Checked before any file is
// written, so a refused report leaves the directory as it was.

/** The first columns of each CSV file the report writes: a file starting so is the report's own. */
const OWN_CSV_START: Record<string, string> = {
  'accounts.csv': 'import_supplier,external_account_number,state,platform_account_number',
  'fix-data.csv': 'import_supplier,external_account_number,record,record_key,file',
  'retry.csv': 'import_supplier,external_account_number,record,record_key,state',
  'unknown-outcome.csv': 'import_supplier,external_account_number,record,record_key,attempts',
  'records.csv': 'import_supplier,external_account_number,record,record_key,state',
  'reconciliation.csv': 'source,file,rows_read,rows_used,rows_unused',
  'control-totals.csv': 'kind,stage,records,transfer_balance',
  'unused-rows.csv': 'source,file,line',
};

export interface OutDirCheck {
  /** --out as given, for messages. */
  given: string;
  outDir: string;
  /** The export directories the state directory's push runs read (ledger runs' options). */
  exportDirs: readonly string[];
  /** The files this report writes. */
  files: readonly string[];
}

/** Throws a UsageError (exit 2) naming why the report may not be written into `outDir`. */
export function refuseUnsafeOutDir(check: OutDirCheck): void {
  refuseInsideExport('--out', check.given, check.outDir, check.exportDirs);
  for (const name of entriesOf(check.outDir)) {
    const file = path.join(check.outDir, name);
    const written = check.files.includes(name);
    if (classifyFileName(name) && !isOwnFile(name, file))
      throw new UsageError(
        `--out ${check.given}: it holds ${name}, an export file; report files never go into an export ` +
          `directory${written ? ` (the report's ${name} would overwrite it)` : ''}. Give another --out.`,
        'report_out_in_export',
      );
    if (written && !isOwnFile(name, file))
      throw new UsageError(
        `--out ${check.given}: ${name} there was not written by migrate report, and the report never overwrites ` +
          'a file of its own name it did not write. Move it away, or give another --out.',
        'report_out_foreign_file',
      );
  }
}

/** The names in an existing --out directory; none when it is missing or not a directory (writing says why). */
function entriesOf(dir: string): string[] {
  try {
    return statSync(dir).isDirectory() ? readdirSync(dir).sort() : [];
  } catch {
    return [];
  }
}

/** A regular file that starts as the report's own file of that name does (written by an earlier report). */
function isOwnFile(name: string, file: string): boolean {
  if (!lstatSync(file).isFile()) return false;
  const head = firstBytes(file, 4096);
  const csv = OWN_CSV_START[name];
  if (csv !== undefined) return head.startsWith(csv);
  if (name === 'summary.json') return /^\{\s*"generated_at":/u.test(head) && head.includes('"state_dir":');
  if (name === 'report.html') return head.startsWith('<!doctype html>') && head.includes('<title>Migration report');
  return false;
}

function firstBytes(file: string, count: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(count);
    return buffer.subarray(0, readSync(fd, buffer, 0, count, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
