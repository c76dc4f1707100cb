// Every `--json` document speaks snake_case, as the service does (docs/operators-guide.md "JSON documents"). The
// documents are built from the code's camelCase objects and turned into snake_case here, at the output edge.

const snakeCase = (key: string): string => key.replace(/[A-Z]/gu, (letter) => `_${letter.toLowerCase()}`);

/**
 * A copy of `value` with every object's keys in snake_case. The value of a key named in `dataMaps` is a map whose keys
 * are data (account states, record kinds, plan reasons): it is copied as it is, only its own field name is converted.
 */
export function snakeCaseKeys(value: unknown, dataMaps: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(value)) return value.map((inner: unknown) => snakeCaseKeys(inner, dataMaps));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      snakeCase(key),
      dataMaps.has(key) ? inner : snakeCaseKeys(inner, dataMaps),
    ]),
  );
}
