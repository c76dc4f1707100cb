export { openShape, type ShapedExport } from './shape-engine.js';
export type { ShapedRow, ShapedView } from './shaped-view.js';
export type { ShapeSource } from './source-files.js';
export { toJson } from './json-text.js';
export { PROVENANCE_COLUMNS } from './load-sources.js';
export type { CheckRow } from './team-checks.js';
export { legacyRowsOfText, legacyRowsText, ROWS_COLUMN, type LegacyRow } from './legacy-rows.js';
export { controlMismatchLines, type DroppedRow, type SourceUse } from './source-use.js';
