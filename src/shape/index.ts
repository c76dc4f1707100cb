export { openShape, type ShapedExport, type ShapeSettings, type SourceRow } from './shape-engine.js';
export type { ShapedRow, ShapedView } from './shaped-view.js';
export type { ShapeSource } from './source-files.js';
export { toJson } from './json-text.js';
