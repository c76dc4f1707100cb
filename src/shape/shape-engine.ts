import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { errnoOf, InputError, MigrateError } from '../errors.js';
import { makePrivateDir, removePrivate } from '../private-files.js';
import type { NotRead } from '../sources/index.js';
import { FILE_KINDS } from '../sources/kinds.js';
import { blockRegionBytes } from './engine-budget.js';
import { shortageError, type ShapeLimits, type ShortageOf } from './engine-limits.js';
import { loadSource, type LoadedSource } from './load-sources.js';
import { passThroughOf, type PassThrough } from './pass-through.js';
import type { ShapedRow, ShapedView } from './shaped-view.js';
import { runShapeFile } from './run-shape.js';
import { exportDirFiles, sourceFiles, type ShapeSource } from './source-files.js';
import { sourceUse, type ControlSource, type DroppedRow, type SourceUse } from './source-use.js';
import { viewLines } from './sql-statements.js';
import { ROWS_COLUMN } from './legacy-rows.js';
import { openTeamChecks, type CheckRow, type TeamChecks } from './team-checks.js';
import { clientText, quoteIdentifier, quoteLiteral } from './sql-text.js';
import { watchTempDir } from './temp-watch.js';
import { UNCOMPRESSED_TABLES, viewRows } from './view-rows.js';

// The shaping stage (docs/export-format.md "Shaping legacy files with SQL"): an in-process DuckDB holding each legacy
// source as a table, locked once they are loaded, then the team's shape file; hands each record kind's view on in
// external account number order with the legacy file and line of every row.

export interface ShapeSettings {
  exportDir: string;
  /** The shape file: absolute, and as messages name it (relative to the working directory). */
  shapeFile: string;
  shapeName: string;
  sources: ShapeSource[];
  /** The engine's memory (past it, sorts, joins and aggregates spill) and the most its temporary directory takes. */
  limits: ShapeLimits;
  /** Where the temporary directory is made (removed on close). */
  tempRoot: string;
  /** The command's stop (SIGINT, SIGTERM, SIGHUP): interrupts the engine's queries, those running and those to come. */
  signal?: AbortSignal;
  /** Called as the shape file starts to run (the sources loaded). */
  onShaping?: () => void;
  /** Files of the export directory that are the run's own (the mapping file), absolute: never listed as unclaimed. */
  ownFiles?: readonly string[];
}

export interface ShapedExport {
  readonly views: ShapedView[];
  readonly sources: LoadedSource[];
  /** Files of the export directory no source claims (nor the shape or mapping file): listed, never read. */
  readonly unclaimed: NotRead[];
  /** The view's rows ordered by `keyColumn` (trimmed, byte order), in batches; each row's cells as text. */
  rows(view: ShapedView, keyColumn: string, keys?: readonly string[]): AsyncGenerator<ShapedRow[], void, undefined>;
  /** The team's check views (`check_<name>`), in name order; empty without any. */
  readonly checks: readonly string[];
  /** The check rows naming no account, in legacy file and line order. */
  keylessChecks(): Promise<CheckRow[]>;
  /** The check rows naming an account, ordered by it as `rows` orders a view's; in batches. */
  keyedChecks(): AsyncGenerator<CheckRow[], void, undefined>;
  /** The legacy rows at these lines, and those holding one of `keys` as a whole cell (an account's other rows). */
  sourceRows(lines: ReadonlyArray<{ file: string; line: number }>, keys?: readonly string[]): Promise<SourceRow[]>;
  /**
   * Once every view was read whole (rows() without keys): each legacy file's rows read and those that reached a
   * record, the view rows that became none (`dropped`) set aside (source-use.ts).
   */
  sourceUse(dropped: AsyncIterable<DroppedRow>): Promise<SourceUse>;
  close(): Promise<void>;
}

export interface SourceRow {
  table: string;
  file: string;
  line: number;
  values: Array<[string, string | null]>;
}

/** What the engine's allocator may keep of memory freed, past its memory limit. */
const ALLOCATOR_FLUSH_THRESHOLD = '8MB';

/** Statements that close the engine to the outside once the sources are in (the order DuckDB accepts them in). */
const LOCK = [
  'SET enable_external_access = false',
  'SET autoinstall_known_extensions = false',
  'SET autoload_known_extensions = false',
  'SET lock_configuration = true',
];

/** The engine's settings for a shape within these limits, its files (database, spills) in `temp`. */
export function engineOptions(limits: ShapeLimits, temp: string): Record<string, string> {
  // A database file in the temporary directory, not memory: the loaded tables then live on disk beside the sorts'
  // spills, and the memory limit bounds what the engine holds of them. Memory the engine frees goes back to the
  // system once a task ends past a few MB (DuckDB keeps up to 128 MB of it by default, on top of its limit). One
  // thread: while the sources load, the tool's readers hold the other cores; measured on two cores, a second thread
  // made the load and the views' sorts take more CPU and more wall time, and the peak RSS 70 MB higher.
  return {
    memory_limit: `${limits.memory.bytes}B`,
    temp_directory: temp,
    allocator_flush_threshold: ALLOCATOR_FLUSH_THRESHOLD,
    // The engine's blocks (what its memory limit counts) from one region of that size, reused from view to view,
    // and the rest of its heap handed back to the system as it goes (at most ten times a second): from the C
    // library's heap, the pages a view's sort freed stayed with the process, in holes the next sort's blocks did
    // not fit, and a push of 1,000,000 accounts peaked at twice the limit (test/bench/results.md, 29 November).
    block_allocator_memory: `${blockRegionBytes(limits.memory.bytes)}B`,
    allocator_bulk_deallocation_flush_threshold: '0B',
    threads: '1',
  };
}

export async function openShape(settings: ShapeSettings): Promise<ShapedExport> {
  const text = await readShapeFile(settings);
  const temp = makePrivateDir(settings.tempRoot, 'shape');
  const open = new Set<DuckDBConnection>();
  const interruptAll = (): void => open.forEach((each) => each.interrupt());
  const watch = watchTempDir(temp, settings.limits.tempDisk.bytes, interruptAll);
  const stop = interruptOnStop(settings.signal, interruptAll);
  const closeAll = (): void => {
    watch.stop();
    stop();
  };
  const context = { limits: settings.limits, tempRoot: settings.tempRoot };
  const shortage: ShortageOf = (where, error) =>
    shortageError(where, error, { ...context, diskStopped: watch.exceeded });
  let instance: DuckDBInstance | undefined;
  try {
    // Loaded only when a shape runs: every other command starts without the engine's library.
    const duckdb = await import('@duckdb/node-api');
    instance = await duckdb.DuckDBInstance.create(
      path.join(temp, 'shape.duckdb'),
      engineOptions(settings.limits, temp),
    );
    const connection = await instance.connect();
    open.add(connection);
    // Set once the instance is open: given with temp_directory at its creation, the engine replaced it with the free
    // space of the disk.
    await connection.run(`SET max_temp_directory_size = '${settings.limits.tempDisk.bytes}B'`);
    const present = await exportDirFiles(settings.exportDir);
    const sources: LoadedSource[] = [];
    for (const source of settings.sources) {
      const files = sourceFiles(settings.exportDir, source, present);
      try {
        sources.push(await loadSource(connection, source, files, temp));
      } catch (error) {
        const engine = error instanceof MigrateError && error.code === 'shape_source_load' ? error.cause : undefined;
        const where = `source ${source.table} (${files.map((file) => file.file).join(', ')})`;
        throw (engine === undefined ? undefined : shortage(where, engine)) ?? error;
      }
    }
    const unclaimed = unclaimedFiles(settings, present, sources);
    const controls = controlSources(settings, sources);
    for (const statement of [UNCOMPRESSED_TABLES, ...LOCK]) await connection.run(statement);
    settings.onShaping?.();
    await runShapeFile(connection, duckdb.StatementType, settings.shapeName, text, shortage);
    const lines = viewLines(text);
    const made = await madeViews(connection);
    const views = await shapedViews(connection, settings.shapeName, sources, made);
    const checks = await openTeamChecks(connection, settings.shapeName, {
      views: [...made.keys()],
      lines,
      sources,
      shortage,
    });
    const memoryBytes = settings.limits.memory.bytes;
    const shaping = { temp, checks, lines, shapeName: settings.shapeName, shortage, memoryBytes, closeAll };
    const opened = shapedExport(instance, open, { views, sources, ...shaping });
    return { ...opened, unclaimed, sourceUse: (dropped) => sourceUse(connection, sources, views, dropped, controls) };
  } catch (error) {
    closeAll();
    instance?.closeSync();
    removePrivate(temp);
    throw error;
  }
}

/** How often a stopped engine is interrupted again: a query started after the last interrupt is stopped too. */
const INTERRUPT_EVERY_MS = 100;

/** Interrupts the engine's queries once `signal` aborts, and again until the engine closes; returns that closing. */
function interruptOnStop(signal: AbortSignal | undefined, interruptAll: () => void): () => void {
  if (signal === undefined) return () => undefined;
  let again: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    interruptAll();
    again = setInterval(interruptAll, INTERRUPT_EVERY_MS);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return () => {
    signal.removeEventListener('abort', onAbort);
    clearInterval(again);
  };
}

const UNCLAIMED =
  'no source of the mapping file claims it: declare it under "sources" (a control file with "control"), or move it ' +
  'out of the export directory';

/** The export directory's files that no source reads and that are not the shape or mapping file. */
function unclaimedFiles(settings: ShapeSettings, present: readonly string[], sources: LoadedSource[]): NotRead[] {
  const claimed = new Set(sources.flatMap((source) => source.files));
  const own = new Set([settings.shapeFile, ...(settings.ownFiles ?? [])].map((file) => path.resolve(file)));
  return present
    .filter((name) => !claimed.has(name) && !own.has(path.resolve(settings.exportDir, name)))
    .map((name) => ({ name, reason: UNCLAIMED }));
}

/** The sources declared as control files, their columns checked against their tables. */
function controlSources(settings: ShapeSettings, sources: readonly LoadedSource[]): ControlSource[] {
  return settings.sources.flatMap((source) => {
    if (source.control === undefined) return [];
    const columns = sources.find((each) => each.table === source.table)?.columns ?? [];
    for (const [key, column] of [
      ['file_column', source.control.fileColumn],
      ['rows_column', source.control.rowsColumn],
    ] as const)
      if (!columns.includes(column))
        throw new InputError(
          `sources.${source.table}.control.${key}`,
          undefined,
          `names the column ${JSON.stringify(column)}, which the control file does not have; its columns: ` +
            `${columns.join(', ')}.`,
          'shape_control_column',
        );
    return [{ table: source.table, ...source.control }];
  });
}

async function readShapeFile(settings: ShapeSettings): Promise<string> {
  try {
    return await readFile(settings.shapeFile, 'utf8');
  } catch (error) {
    const code = errnoOf(error) ?? String(error);
    throw new InputError(
      settings.shapeName,
      undefined,
      `the shape file cannot be read (${code}).`,
      'shape_unreadable',
      error,
    );
  }
}

function shapedExport(
  instance: DuckDBInstance,
  open: Set<DuckDBConnection>,
  made: {
    views: ShapedView[];
    sources: LoadedSource[];
    temp: string;
    checks: TeamChecks | undefined;
    lines: ReadonlyMap<string, number>;
    shapeName: string;
    shortage: ShortageOf;
    /** The engine's memory limit. */
    memoryBytes: number;
    /** Stops watching the temporary directory and the stop signal. */
    closeAll: () => void;
  },
): Omit<ShapedExport, 'unclaimed' | 'sourceUse'> {
  const { views, sources, temp, checks, lines, shapeName, shortage, memoryBytes, closeAll } = made;
  const [connection] = open;
  if (connection === undefined) throw new Error('the shape engine has no connection');
  // One connection per stream: the views are read side by side, and a connection streams one result at a time.
  async function* ownConnection<T>(read: (own: DuckDBConnection) => AsyncGenerator<T, void, undefined>) {
    const own = await instance.connect();
    open.add(own);
    try {
      yield* read(own);
    } finally {
      open.delete(own);
      own.closeSync();
    }
  }
  return {
    views,
    sources,
    checks: checks?.codes ?? [],
    keylessChecks: async () => (checks ? checks.keyless() : []),
    keyedChecks: () => ownConnection((own) => (checks ? checks.keyed(own) : noRows())),
    rows: (view, keyColumn, keys) =>
      ownConnection((own) =>
        viewRows(
          own,
          { place: { shapeName, view: view.kind, line: lines.get(view.kind) }, sources, shortage, memoryBytes },
          view,
          keyColumn,
          keys,
        ),
      ),
    sourceRows: (lines, keys = []) => readSourceRows(connection, sources, lines, keys),
    close: () => {
      closeAll();
      for (const each of open) each.closeSync();
      instance.closeSync();
      removePrivate(temp);
      return Promise.resolve();
    },
  };
}

async function* noRows(): AsyncGenerator<never, void, undefined> {}

/** Every view the shape file made: its name in lower case -> its SQL. */
async function madeViews(connection: DuckDBConnection): Promise<Map<string, string>> {
  const made = await connection.runAndReadAll(
    "SELECT lower(view_name), sql FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'",
  );
  return new Map((made.getRowsJS() as Array<[string, string]>).map(([name, sql]) => [name, sql]));
}

/** The record kinds' views the shape file made, checked: `accounts` present, `_file` and `_line` in each. */
async function shapedViews(
  connection: DuckDBConnection,
  shapeName: string,
  sources: LoadedSource[],
  sqlOf: ReadonlyMap<string, string>,
): Promise<ShapedView[]> {
  if (!sqlOf.has('accounts'))
    throw new InputError(
      shapeName,
      undefined,
      'makes no accounts view: a shape file must end with CREATE VIEW accounts AS SELECT ... (one row per account, ' +
        'with _file and _line); the other kinds are optional.',
      'shape_no_accounts',
    );
  const columnsOf = new Map(sources.map((source) => [source.table.toLowerCase(), source.columns]));
  const views: ShapedView[] = [];
  for (const kind of FILE_KINDS) {
    const sql = sqlOf.get(kind);
    if (sql === undefined) continue;
    const prepared = await connection.prepare(`SELECT * FROM ${quoteIdentifier(kind)}`);
    const all = Array.from({ length: prepared.columnCount }, (_, index) => prepared.columnName(index));
    prepared.destroySync();
    for (const needed of ['_file', '_line'])
      if (!all.includes(needed))
        throw new InputError(
          shapeName,
          undefined,
          `the view ${kind} has no ${needed} column: every view carries _file and _line from the legacy row each ` +
            `record comes from (select ${needed} of the source table the record is built from).`,
          'shape_no_provenance',
        );
    const columns = all.filter((column) => column !== '_file' && column !== '_line' && column !== ROWS_COLUMN);
    const hasRows = all.includes(ROWS_COLUMN);
    views.push({ kind, columns, hasRows, passThrough: await passThrough(connection, sql, columnsOf) });
  }
  return views;
}

async function passThrough(
  connection: DuckDBConnection,
  sql: string,
  columnsOf: ReadonlyMap<string, readonly string[]>,
): Promise<PassThrough> {
  const query = sql.replace(/^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?VIEW\s+.+?\s+AS\s+/is, '');
  const tree = await connection.runAndReadAll(`SELECT json_serialize_sql(${quoteLiteral(query.replace(/;\s*$/, ''))})`);
  const text = tree.getRowsJS()[0]?.[0];
  const parsed = JSON.parse(typeof text === 'string' ? text : '{}') as { statements?: Array<{ node?: object }> };
  const node = parsed.statements?.[0]?.node;
  return node ? passThroughOf(node, columnsOf) : { table: undefined, columns: {} };
}

async function readSourceRows(
  connection: DuckDBConnection,
  sources: LoadedSource[],
  lines: ReadonlyArray<{ file: string; line: number }>,
  keys: readonly string[],
): Promise<SourceRow[]> {
  if (lines.length === 0 && keys.length === 0) return [];
  const atLines = lines.map(({ file, line }) => `(_file = ${quoteLiteral(file)} AND _line = ${line})`);
  const keyList = keys.map(quoteLiteral).join(', ');
  const rows: SourceRow[] = [];
  for (const source of sources) {
    // A row no record carries may still be the account's (a dual-fuel account's second supply point): any row holding
    // the account number as a whole cell is shown too.
    const holding =
      keys.length === 0 ? [] : source.columns.map((column) => `${quoteIdentifier(column)} IN (${keyList})`);
    const where = [...atLines, ...holding].join(' OR ');
    const selected = [...source.columns.map((column) => clientText(quoteIdentifier(column))), '_file', '_line'];
    const read = await connection.runAndReadAll(
      `SELECT ${selected.join(', ')} FROM ${quoteIdentifier(source.table)} WHERE ${where} ORDER BY _file, _line`,
    );
    for (const row of read.getRowsJS()) {
      const values = source.columns.map((column, index): [string, string | null] => [
        column,
        row[index] as string | null,
      ]);
      rows.push({
        table: source.table,
        file: row[source.columns.length] as string,
        line: Number(row[source.columns.length + 1]),
        values,
      });
    }
  }
  return rows;
}
