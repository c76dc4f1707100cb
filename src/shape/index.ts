export { openShape, type ShapedExport } from './shape-engine.js';
export type { ShapedView } from './shaped-view.js';
export type { ShapeSource } from './source-files.js';
export { toJson } from './json-text.js';
export { PROVENANCE_COLUMNS } from './load-sources.js';
export { controlMismatchLines, type DroppedRow, type SourceUse } from './source-use.js';
