import type { FileKind } from '../sources/kinds.js';
import type { LegacyRow } from './legacy-rows.js';
import type { PassThrough } from './pass-through.js';

/** One record kind's view, as the shape file made it. */
export interface ShapedView {
  kind: FileKind;
  /** Its columns in order, without `_file`, `_line` and `_rows`. */
  columns: string[];
  /** The view names every legacy row of a record in a `_rows` column. */
  hasRows: boolean;
  /** Columns that are a legacy column passed through: view column -> legacy column. */
  passThrough: PassThrough;
}

/** A row of a view with the legacy file and line it carries (`_file`, `_line`). */
export interface ShapedRow {
  file: string;
  line: number;
  /** The view's columns as text (NULL: ''), in ShapedView.columns order. */
  cells: string[];
  /** Every legacy row of the record, where the view names them (`_rows`). */
  rows?: LegacyRow[];
}
