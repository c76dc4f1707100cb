export { openShape, type ShapedExport } from './shape-engine.js';
export type { ShapedView } from './shaped-view.js';
export type { ShapeSource } from './source-files.js';
export { toJson } from './json-text.js';
export { PROVENANCE_COLUMNS } from './load-sources.js';
export { shapeLimits } from './engine-budget.js';
export { SHAPE_MEMORY, SHAPE_TEMP_LIMIT, type EngineLimit, type ShapeLimits } from './engine-limits.js';
export { formatSize, parseSize } from './engine-size.js';
