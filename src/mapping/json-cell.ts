import { isJsonNumber, JsonSyntaxError, jsonNumberText, parseJson } from '../sources/json-value.js';
import { issue, type Coerced } from './coerced.js';
import { exactNumber } from './coerce-number.js';
import { ExportCode } from './issue-codes.js';

// JSON-typed fields (metadata, ledgers, line items, tenant objects and lists, document paths): JSON text in a cell,
// or real JSON in a JSON record. Read with the export's own JSON parser (a repeated key is an error, a number keeps
// its text), and every number inside sent as a JSON number only where that carries it exactly. Pure.

/** An own property, as JSON.parse makes it ("__proto__" included). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

type Walked = { value: unknown } | { code: string; problem: string };

/** A copy of a parsed JSON value with each number as a JS number, or the first number that cannot be sent exactly. */
export function withExactNumbers(value: unknown, path: string): Walked {
  if (isJsonNumber(value)) {
    const number = exactNumber(jsonNumberText(value));
    return 'value' in number ? number : { code: number.code, problem: `${path}: ${number.problem}` };
  }
  if (typeof value === 'number' && !Number.isFinite(value))
    return { code: ExportCode.numberOutOfRange, problem: `${path}: ${value} is not a number JSON can carry` };
  if (typeof value !== 'object' || value === null) return { value };
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    for (let index = 0; index < value.length; index += 1) {
      const item = withExactNumbers(value[index], `${path}.${index}`);
      if (!('value' in item)) return item;
      copy.push(item.value);
    }
    return { value: copy };
  }
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const item = withExactNumbers(inner, `${path}.${key}`);
    if (!('value' in item)) return item;
    put(copy, key, item.value);
  }
  return { value: copy };
}

/** JSON text (a cell, or a string in a JSON record) as JSON; a value that already is JSON as it is. Numbers marked. */
export function readJsonCell(value: unknown, field: string): Coerced {
  if (typeof value !== 'string' || isJsonNumber(value)) return { value };
  try {
    return { value: parseJson(value) };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return issue(
      value,
      ExportCode.invalidJson,
      `${field}: the cell is not valid JSON (${error.message} at character ${error.offset + 1}).`,
    );
  }
}

export function coerceJson(type: 'json' | 'json-array', value: unknown, field: string): Coerced {
  const read = readJsonCell(value, field);
  if (read.issue) return read;
  const parsed = read.value;
  if (type === 'json-array' && !Array.isArray(parsed))
    return issue(value, ExportCode.invalidType, `${field} must be a JSON array.`);
  if (type === 'json' && parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed)))
    return issue(value, ExportCode.invalidType, `${field} must be a JSON object.`);
  const exact = withExactNumbers(parsed, field);
  if (!('value' in exact)) return issue(value, exact.code, `${exact.problem}; it cannot be sent as it is.`);
  return { value: exact.value };
}

/** `a.pdf;b.pdf` or `["a.pdf"]` -> `[{document_path: "a.pdf"}, ...]` (docs/export-format.md "Columns", notes). */
export function coerceDocumentPaths(value: unknown, field: string): Coerced {
  let list: unknown = value;
  if (typeof value === 'string' && !isJsonNumber(value)) {
    if (value.startsWith('[')) {
      const json = coerceJson('json-array', value, field);
      if (json.issue) return json;
      list = json.value;
    } else {
      list = value
        .split(';')
        .map((part) => part.trim())
        .filter((part) => part !== '');
    }
  } else if (Array.isArray(value)) {
    const json = coerceJson('json-array', value, field);
    if (json.issue) return json;
    list = json.value;
  }
  if (!Array.isArray(list))
    return issue(value, ExportCode.invalidType, `${field} must be paths separated by ";" or a JSON array of strings.`);
  return { value: list.map((item: unknown) => (typeof item === 'string' ? { document_path: item } : item)) };
}
