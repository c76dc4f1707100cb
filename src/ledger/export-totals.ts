import type Database from 'better-sqlite3';

// The control totals of the export a push read to its end (docs/control-totals.md), kept per run so that `migrate
// report` can set them beside what the ledger says was sent and accepted: per record kind the records shaped and
// valid with their sums (exact decimal text), per legacy file its rows read and used, and every legacy row that
// reached no record, one row each (a planted mistake may leave millions: never one document).

/** The sums of one kind at one stage: field -> exact decimal text. */
export type MoneyTotals = Partial<Record<string, string>>;

/** Records of one kind at one stage, with their sums. */
export interface KindTotal {
  kind: string;
  stage: string;
  records: number;
  money: MoneyTotals;
}

/** A legacy source file (or a file of an export in the layout of the tool): rows read, and those that made a record. */
export interface SourceFileUse {
  source: string;
  file: string;
  rowsRead: number;
  rowsUsed: number;
}

/** A legacy row that reached no record. */
export interface UnusedRow {
  source: string;
  file: string;
  line: number;
}

/** A control file's count of a file set against the rows read (docs/control-totals.md "Control files"). */
export interface ControlCount {
  controlFile: string;
  line: number;
  file: string;
  /** As the control file writes it. */
  declared: string;
  /** The rows read of that file; undefined when the export holds no such file. */
  read: number | undefined;
}

export interface ExportTotals {
  kinds: KindTotal[];
  sources: SourceFileUse[];
  /** Files of the export directory that no source, kind or known file claims. */
  unclaimed: string[];
  controlCounts: ControlCount[];
}

/** The totals a run recorded, with the run. */
export interface RecordedTotals {
  runId: number;
  startedAt: string;
  totals: ExportTotals;
}

const hasTables = (db: Database.Database): boolean =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'export_totals'").get() !== undefined;

/** Records a run's unused rows, numbered on from `firstId` (inside the caller's transaction). */
export function insertUnusedRows(db: Database.Database, runId: number, firstId: number, rows: readonly UnusedRow[]) {
  const insert = db.prepare('INSERT INTO unused_rows (run_id, id, source, file, line) VALUES (?, ?, ?, ?, ?)');
  rows.forEach((row, index) => insert.run(runId, firstId + index, row.source, row.file, row.line));
}

/** Records a run's totals: written last, once its unused rows are in (a run without them did not read to the end). */
export function insertExportTotals(db: Database.Database, runId: number, totals: ExportTotals): void {
  db.prepare('INSERT OR REPLACE INTO export_totals (run_id, totals) VALUES (?, ?)').run(runId, JSON.stringify(totals));
}

/** The totals of the last run that recorded any (undefined: none, or a ledger older than them). */
export function lastExportTotals(db: Database.Database): RecordedTotals | undefined {
  if (!hasTables(db)) return undefined;
  const row = db
    .prepare(
      'SELECT t.run_id AS runId, r.started_at AS startedAt, t.totals AS totals FROM export_totals t ' +
        'LEFT JOIN runs r ON r.id = t.run_id ORDER BY t.run_id DESC LIMIT 1',
    )
    .get() as { runId: number; startedAt: string | null; totals: string } | undefined;
  if (row === undefined) return undefined;
  return { runId: row.runId, startedAt: row.startedAt ?? '', totals: JSON.parse(row.totals) as ExportTotals };
}

/** A run's unused rows with id > afterId, in id order (the order they were found: file, then line). */
export function unusedRowsPage(
  db: Database.Database,
  runId: number,
  afterId: number,
  limit: number,
): Array<UnusedRow & { id: number }> {
  if (!hasTables(db)) return [];
  return db
    .prepare('SELECT id, source, file, line FROM unused_rows WHERE run_id = ? AND id > ? ORDER BY run_id, id LIMIT ?')
    .all(runId, afterId, limit) as Array<UnusedRow & { id: number }>;
}
