import type { DuckDBConnection } from '@duckdb/node-api';
import type { ControlCount, SourceFileUse, UnusedRow } from '../ledger/index.js';
import type { LoadedSource } from './load-sources.js';
import type { ShapedView } from './shaped-view.js';
import { quoteIdentifier } from './sql-text.js';
import { sortedTable } from './view-rows.js';

// Which legacy rows reached a record (docs/control-totals.md): a row whose file and line a view's row carries, unless
// that view row itself became no record (no account number, an account that is not in the export: `dropped`). Worked
// out by the engine over the views' sorted tables (view-rows.ts), which every view's read leaves behind: the sets of
// rows live in its database file and its memory limit, never in this process, whatever the export's size.

/** A view row that became no record: its kind and the legacy row it carries. */
export interface DroppedRow {
  kind: string;
  file: string;
  line: number;
}

export interface SourceUse {
  /** Every legacy file of every source: rows read, rows that reached a record. */
  files: SourceFileUse[];
  /** What the export's control files declare of the files' rows, beside the rows read. */
  controlCounts: ControlCount[];
  /** The rows that reached none, in batches, source by source, in file and line order. */
  unused(): AsyncGenerator<UnusedRow[], void, undefined>;
}

const USED = 'migrate_rows_used';
const DROPPED = 'migrate_rows_dropped';

export async function sourceUse(
  connection: DuckDBConnection,
  sources: readonly LoadedSource[],
  views: readonly ShapedView[],
  dropped: AsyncIterable<DroppedRow>,
): Promise<SourceUse> {
  await connection.run(`CREATE OR REPLACE TABLE ${DROPPED} (kind VARCHAR, _file VARCHAR, _line BIGINT)`);
  const appender = await connection.createAppender(DROPPED);
  for await (const row of dropped) {
    appender.appendVarchar(row.kind);
    appender.appendVarchar(row.file);
    appender.appendBigInt(BigInt(row.line));
    appender.endRow();
  }
  appender.closeSync();
  const carried = views.map(
    (view) =>
      `SELECT _file, _line FROM ${sortedTable(view)} EXCEPT ` +
      `SELECT _file, _line FROM ${DROPPED} WHERE kind = '${view.kind}'`,
  );
  await connection.run(`CREATE OR REPLACE TABLE ${USED} AS ${carried.join(' UNION ')}`);
  const files: SourceFileUse[] = [];
  for (const source of sources) {
    const counted = await connection.runAndReadAll(
      `SELECT s._file, count(*), count(u._line) FROM ${quoteIdentifier(source.table)} s ` +
        `LEFT JOIN ${USED} u ON u._file = s._file AND u._line = s._line GROUP BY s._file`,
    );
    const byFile = new Map(
      (counted.getRows() as Array<[string, bigint, bigint]>).map(([file, read, used]) => [file, [read, used]]),
    );
    for (const file of source.files) {
      const [read, used] = byFile.get(file) ?? [0n, 0n];
      files.push({ source: source.table, file, rowsRead: Number(read), rowsUsed: Number(used) });
    }
  }
  return { files, controlCounts: [], unused: () => unusedRows(connection, sources) };
}

async function* unusedRows(
  connection: DuckDBConnection,
  sources: readonly LoadedSource[],
): AsyncGenerator<UnusedRow[], void, undefined> {
  for (const source of sources) {
    const result = await connection.stream(
      `SELECT s._file, s._line FROM ${quoteIdentifier(source.table)} s ANTI JOIN ${USED} u ` +
        'ON u._file = s._file AND u._line = s._line ORDER BY s._file, s._line',
    );
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const rows = chunk.getRows() as Array<[string, bigint]>;
      yield rows.map(([file, line]) => ({ source: source.table, file, line: Number(line) }));
    }
  }
}
