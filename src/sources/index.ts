export { readCsv, type CsvRow } from './csv.js';
export { readCsvBatches } from './csv-thread.js';
export { findExportFiles, type ExportFile, type ExportFiles } from './files.js';
export { readJsonArray, readNdjson, type JsonRecord } from './json.js';
export { classifyFileName, FILE_KINDS, kindOfFile, type FileFormat, type FileKind } from './kinds.js';
