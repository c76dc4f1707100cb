export { readCsv, type CsvRow } from './csv.js';
export { readCsvBatches } from './csv-thread.js';
export { readFixedWidth, type FixedColumn, type FixedRow } from './fixed-width.js';
export { findExportFiles, type ExportFile, type ExportFiles, type NotRead } from './files.js';
export { type FileGlobs } from './file-globs.js';
export { readJsonArray, readNdjson } from './json.js';
export { type FileFormat, type FileKind } from './kinds.js';
