import os from 'node:os';
import { InputError } from '../errors.js';
import type { ExportMapping, ShapeRules } from '../mapping/mapping-rules.js';
import { planFile, type FilePlan } from '../mapping/record.js';
import type { JoinContext } from '../mapping/sourced-record.js';
import type { ExportEntry } from '../mapping/types.js';
import {
  legacyRowsText,
  openShape,
  shapeLimits,
  ROWS_COLUMN,
  type ShapedExport,
  type ShapedRow,
  type ShapedView,
} from '../shape/index.js';
import type { ExportFile, FileKind } from '../sources/index.js';
import { accountKeyOf } from '../sources/key-order.js';
import { stopSignal } from '../stop-signals.js';
import { FILE_KINDS } from '../sources/kinds.js';
import type { ExportReader, ExportSummary } from './index.js';
import { concatIssues, IssueSpool } from './issue-spool.js';
import type { KeyedRecord, OpenedFile } from './read-export.js';
import { addressable, missingKeyIssue, type IssueSink } from './record-key.js';
import { streamEntries, type StreamCounts } from './stream-join.js';
import { shapedRowsOf, type ShownRows } from './shown-rows.js';
import { droppedRows } from './source-use.js';
import { withTeamChecks } from './team-check-issues.js';

// An export of legacy files shaped by SQL (docs/export-format.md "Shaping legacy files with SQL") read as the tool's
// own layout is: each record kind's view is one "file" of the sorted stream join, its rows in external account number
// order (DuckDB sorts them), each row's cells followed by the legacy `_file` and `_line` it carries, which the mapping
// names every problem at (mapping/record.ts recordOrigin). From there the pipeline is the one every export takes.

export interface ShapedReader extends ExportReader {
  /** Shaped exports are sorted by the engine: there is no order proof. */
  readonly proof: undefined;
  /** The rows of chosen accounts, legacy and shaped (validate --show); while the reader is open. */
  shownRows(keys: readonly string[]): Promise<ShownRows>;
}

export interface ShapedOpenOptions {
  today?: string;
  scratchDir?: string;
  /** --allow-no-accounts: an accounts view without rows is not refused. */
  allowNoAccounts?: boolean;
}

export async function openShapedExport(
  dir: string,
  config: ExportMapping & { shape: ShapeRules },
  options: ShapedOpenOptions = {},
): Promise<ShapedReader> {
  const rules = config.shape;
  const shaped = await openShape({
    exportDir: dir,
    shapeFile: rules.file,
    shapeName: rules.name,
    sources: rules.sources,
    limits: shapeLimits(rules.limits ?? {}, os.tmpdir()),
    tempRoot: os.tmpdir(),
    signal: stopSignal(),
    ownFiles: config.configFile === undefined ? [] : [config.configFile],
  });
  try {
    return readShaped(shaped, rules, config, options);
  } catch (error) {
    await shaped.close();
    throw error;
  }
}

function readShaped(
  shaped: ShapedExport,
  rules: ShapeRules,
  config: ExportMapping,
  options: ShapedOpenOptions,
): ShapedReader {
  const files = shaped.views.map((view) => viewFile(rules, view));
  const keyColumns = shaped.views.map((view) => viewKeyColumn(rules, view, config));
  const plans = shaped.views.map((view) => viewPlan(rules, view, config, shaped.sources));
  const issues = files.map(() => new IssueSpool(options.scratchDir, { byLine: true }));
  // The team's check rows that fit no account of the export: problems of the export at their lines.
  const unfitChecks = new IssueSpool(options.scratchDir, { byLine: true });
  const opened = shaped.views.map((view, index) =>
    viewRecords(shaped, view, keyColumns[index] as string, {
      plan: plans[index] as FilePlan,
      file: files[index] as ExportFile,
      issues: issues[index] as IssueSink,
    }),
  );
  if (options.allowNoAccounts !== true && opened[0]) opened[0] = refuseNoRows(opened[0], rules);
  const summary = shapedSummary(files, config, shaped.unclaimed);
  const context = joinContext(config, options.today, columnOfLegacy(shaped, plans));
  const setup = { plans, fileNames: files.map((file) => file.file), context };
  const counts: StreamCounts = { records: files.map(() => 0), accounts: 0, orphanAccounts: 0 };
  let started = false;
  const keyColumnOf = (kind: string): string =>
    keyColumns[shaped.views.findIndex((view) => view.kind === kind)] ?? 'external_account_number';
  return {
    proof: undefined,
    shownRows: (keys) => shapedRowsOf(shaped, keyColumnOf, keys),
    summary,
    fileIssues: concatIssues([...issues, unfitChecks]),
    sourceUse: () => shaped.sourceUse(droppedRows(files, issues)),
    entries: async function* (): AsyncGenerator<ExportEntry> {
      if (started) throw new Error('a shaped export can be read once');
      started = true;
      yield* withTeamChecks(streamEntries(files, opened, setup, issues, counts), shaped, unfitChecks);
      counts.records.forEach((count, index) => {
        const file = summary.files[index];
        if (!file) return;
        file.records = count;
        summary.records[file.kind] += count;
      });
      Object.assign(summary, { accounts: counts.accounts, orphanAccounts: counts.orphanAccounts });
    },
    close: async () => {
      await Promise.all(opened.map((file) => file.close()));
      issues.forEach((spool) => spool.close());
      unfitChecks.close();
      await shaped.close();
    },
  };
}

/**
 * An accounts view without rows creates nothing (a filter that matches no legacy row, `'Live'` for `'LIVE'`): refused
 * as an empty accounts file is, before the join hands out anything (the join reads every view's first rows first).
 */
function refuseNoRows(opened: OpenedFile, rules: ShapeRules): OpenedFile {
  const inner = opened.records;
  const records = (async function* (): AsyncGenerator<KeyedRecord[], void, undefined> {
    let rows = false;
    for await (const batch of inner) {
      rows ||= batch.length > 0;
      yield batch;
    }
    if (!rows)
      throw new InputError(
        rules.name,
        undefined,
        'its accounts view holds no row: an export without accounts creates nothing (a filter that matches no ' +
          'legacy row, a source that is empty?). If this export only adds post-import records to accounts imported ' +
          'earlier, run again with --allow-no-accounts.',
        'input_no_account_rows',
      );
  })();
  return {
    ...opened,
    records,
    close: async () => void (await Promise.all([records.return(undefined), opened.close()])),
  };
}

/** A view as the join's "file": named after the shape file and the view. */
function viewFile(rules: ShapeRules, view: ShapedView): ExportFile {
  return {
    kind: view.kind,
    format: 'csv',
    file: `${rules.name} (view ${view.kind})`,
    absolutePath: rules.file,
    bytes: 0,
  };
}

/**
 * The view's column that fills external_account_number: one of that name the mapping file does not rename, or one it
 * renames to it (`"rename": {"ACCT_NO": "external_account_number"}`); the rows are ordered and joined by it.
 */
export function viewKeyColumn(rules: ShapeRules, view: ShapedView, config: Pick<ExportMapping, 'mapping'>): string {
  const rename = config.mapping[view.kind].rename;
  const key = view.columns.find((column) => (rename[column] ?? [column]).includes('external_account_number'));
  if (key === undefined)
    throw new InputError(
      rules.name,
      undefined,
      `the view ${view.kind} has no external_account_number column (every record needs it to join its account); ` +
        'select it, or rename a column to it under mapping.' +
        `${view.kind}.rename in the mapping file.`,
      'shape_no_key',
    );
  return key;
}

/**
 * A view's plan, as a CSV header's: its columns must be documented fields of the kind, or names the mapping file
 * renames or ignores. Problems are named at the legacy column a view passes through, and at none where it computes.
 */
function viewPlan(
  rules: ShapeRules,
  view: ShapedView,
  config: ExportMapping,
  sources: ShapedExport['sources'],
): FilePlan {
  const plan = planFile(view.kind, viewFile(rules, view).file, viewHeader(view), config);
  if (plan.unknownColumns.length > 0)
    throw new InputError(
      rules.name,
      undefined,
      `the view ${view.kind} has columns that are not documented fields of ${view.kind}: ` +
        `${plan.unknownColumns.join(', ')}. Name each column after its field (docs/export-format.md "Columns"), or ` +
        `rename or ignore it under mapping.${view.kind} in the mapping file.`,
      'shape_unknown_column',
    );
  const references = view.passThrough.references ?? {};
  plan.columns = plan.columns.map((column) => {
    const reference = column.column === undefined ? undefined : references[column.column];
    const files = sources.find((source) => source.table.toLowerCase() === reference?.table)?.files;
    return {
      ...column,
      column: column.column === undefined ? undefined : view.passThrough.columns[column.column],
      ...(reference && files && view.hasRows ? { from: { files, column: reference.column } } : {}),
    };
  });
  return plan;
}

/** A view's columns as its records' cells hold them: its own, then the legacy file and line, then `_rows`. */
export function viewHeader(view: ShapedView): string[] {
  return [...view.columns, '_file', '_line', ...(view.hasRows ? [ROWS_COLUMN] : [])];
}

/** A view's rows as the join's records, keyed by its key column (viewKeyColumn). */
function viewRecords(
  shaped: ShapedExport,
  view: ShapedView,
  keyColumn: string,
  { plan, file, issues }: { plan: FilePlan; file: ExportFile; issues: IssueSink },
): OpenedFile {
  const keyIndex = view.columns.indexOf(keyColumn);
  const legacyKey = view.passThrough.columns[keyColumn];
  const rows = shaped.rows(view, keyColumn);
  const records = (async function* (): AsyncGenerator<KeyedRecord[], void, undefined> {
    for await (const batch of rows) {
      const keyed: KeyedRecord[] = [];
      for (const row of batch) {
        const at = { ...file, file: row.file };
        const key = accountKeyOf(row.cells[keyIndex] ?? '');
        if (key === undefined) {
          const { column: _viewColumn, ...issue } = missingKeyIssue(at, plan, row.line);
          issues.push(legacyKey === undefined ? issue : { ...issue, column: legacyKey });
        } else if (addressable(at, plan, row.line, key, issues))
          keyed.push({ key, line: row.line, data: recordCells(view, row) });
      }
      yield keyed;
    }
  })();
  return {
    plan,
    records,
    close: async () => void (await Promise.all([records.return(undefined), rows.return(undefined)])),
  };
}

/** A view's row as the cells of a record, in viewHeader's order. */
export function recordCells(view: ShapedView, row: ShapedRow): string[] {
  const cells = [...row.cells, row.file, String(row.line)];
  if (view.hasRows) cells.push(legacyRowsText(row.rows ?? []));
  return cells;
}

/**
 * Legacy file -> field -> legacy column, for the columns a view passes through (what locating a service's error at
 * its legacy column needs). A field two views fill from different columns of one file is left unnamed.
 */
function columnOfLegacy(shaped: ShapedExport, plans: FilePlan[]): Record<string, Record<string, string>> {
  const byFile: Record<string, Record<string, string>> = {};
  const clash = new Set<string>();
  shaped.views.forEach((view, index) => {
    const plan = plans[index] as FilePlan;
    const source = shaped.sources.find((each) => each.table.toLowerCase() === view.passThrough.table);
    for (const file of source?.files ?? []) {
      const into = (byFile[file] ??= {});
      for (const [viewColumn, legacy] of Object.entries(view.passThrough.columns)) {
        for (const field of plan.mapping.rename[viewColumn] ?? [viewColumn]) {
          if (into[field] !== undefined && into[field] !== legacy) clash.add(`${file}\u0000${field}`);
          into[field] = legacy;
        }
      }
    }
  });
  for (const entry of clash) {
    const [file, field] = entry.split('\u0000') as [string, string];
    delete byFile[file]?.[field];
  }
  return byFile;
}

function shapedSummary(files: ExportFile[], config: ExportMapping, notRead: ExportSummary['notRead']): ExportSummary {
  return {
    files: files.map((file) => ({ file: file.file, kind: file.kind, format: file.format, records: 0 })),
    records: Object.fromEntries(FILE_KINDS.map((kind) => [kind, 0])) as Record<FileKind, number>,
    accounts: 0,
    orphanAccounts: 0,
    notRead,
    configFile: config.configFile,
    spellings: { lines: 0, sample: [] },
  };
}

function joinContext(
  config: ExportMapping,
  today: string | undefined,
  columnOf: Record<string, Record<string, string>>,
): JoinContext {
  return {
    today: today ?? new Date().toISOString().slice(0, 10),
    columnOf,
    importSupplier: config.importSupplier,
    multiplePaymentInstructions: config.multiplePaymentInstructions,
    tenantFields: config.tenantFields,
    openPeriod:
      config.openPeriodStart === undefined
        ? undefined
        : { start: config.openPeriodStart, force: config.forceAddToCurrentStatement },
    contract: config.contract,
    dialect: config.dialect,
  };
}
