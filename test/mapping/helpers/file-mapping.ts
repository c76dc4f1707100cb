import type { FileMapping } from '../../../src/mapping/mapping-rules.js';

/** A file's mapping with nothing declared, and the overrides a test gives. */
export function fileMapping(overrides: Partial<FileMapping> = {}): FileMapping {
  return {
    rename: {},
    ignore: [],
    unmapped: 'report',
    constants: {},
    defaults: {},
    values: {},
    dateFormats: [],
    datetimeFormats: [],
    utcOffset: undefined,
    scale: {},
    minorUnits: [],
    delimiter: ',',
    encoding: 'utf8',
    ...overrides,
  };
}
