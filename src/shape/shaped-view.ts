import type { FileKind } from '../sources/kinds.js';
import type { PassThrough } from './pass-through.js';

/** One record kind's view, as the shape file made it. */
export interface ShapedView {
  kind: FileKind;
  /** Its columns in order, without `_file` and `_line`. */
  columns: string[];
  /** Columns that are a legacy column passed through: view column -> legacy column. */
  passThrough: PassThrough;
}

/** A row of a view with the legacy file and line it carries (`_file`, `_line`). */
export interface ShapedRow {
  file: string;
  line: number;
  /** The view's columns as text (NULL: ''), in ShapedView.columns order. */
  cells: string[];
}
