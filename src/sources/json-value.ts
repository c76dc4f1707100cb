// A strict JSON parser (RFC 8259) for export records and JSON cells, where JSON.parse would change values on the
// way (docs/export-format.md "JSON and NDJSON records"):
// - a number keeps its source text: it is returned as NUMBER_MARK followed by that text (`1.10` -> "\u00001.10"),
//   never as a binary double that would turn 90000000000000000001 into 90000000000000000000 and 1e309 into
//   Infinity (then `null` in any JSON written later). The mapping converts it per field (mapping/json-number.ts).
//   A marked number is a plain string, so it survives every JSON round trip of the intake (the sorted run files,
//   the scratch join's scratch database) unchanged;
// - a key given twice in one object is an error, never "the last one wins";
// - a string holding U+0000 is an error: no export text holds it (the readers refuse a NUL byte as binary data),
//   and it is what tells a marked number from a string.
// lossless-json was measured and not kept: it accepts a repeated key when both values are equal, and it parsed a
// typical accounts record 3.6 times slower than this parser (about twice JSON.parse's time).

/** The first character of a number as parsed here: what tells it from a string, which never holds U+0000. */
export const NUMBER_MARK = '\u0000';

/** Deepest nesting of arrays and objects read: deeper is an error, not a stack overflow. */
export const MAX_JSON_DEPTH = 512;

export type JsonProblem = 'syntax' | 'duplicate_key' | 'nul_character' | 'too_deep';

/** Why a text is not JSON this parser reads, and where (a UTF-16 offset into the text). */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly problem: JsonProblem,
    readonly key?: string,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** A number as parseJson returns it: NUMBER_MARK and its source text. */
export type JsonNumber = string & { readonly jsonNumber: true };

/** True for a number as parseJson returns it. */
export function isJsonNumber(value: unknown): value is JsonNumber {
  return typeof value === 'string' && value.charCodeAt(0) === 0;
}

/** The source text of a number as parseJson returns it (`"\u00001.10"` -> `1.10`). */
export function jsonNumberText(value: JsonNumber): string {
  return value.slice(1);
}

/** Parses one JSON text; numbers come back marked with their source text (see above). Throws JsonSyntaxError. */
export function parseJson(text: string): unknown {
  return new JsonParser(text).document();
}

// JSON forbids these unescaped in a string (a raw tab or line break), as JSON.parse does.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

class JsonParser {
  readonly #text: string;
  #at = 0;
  #depth = 0;

  constructor(text: string) {
    this.#text = text;
  }

  document(): unknown {
    const value = this.#value();
    this.#whitespace();
    if (this.#at < this.#text.length) this.#fail('text after the end of the JSON value');
    return value;
  }

  #fail(what: string, at = this.#at, problem: JsonProblem = 'syntax', key?: string): never {
    throw new JsonSyntaxError(what, at, problem, key);
  }

  #unexpected(expected: string): never {
    const char = this.#text.charAt(this.#at);
    this.#fail(char === '' ? `the text ends where ${expected} belongs` : `${JSON.stringify(char)} where ${expected}`);
  }

  #whitespace(): void {
    const text = this.#text;
    for (let code = text.charCodeAt(this.#at); ; code = text.charCodeAt(++this.#at))
      if (code !== 32 && code !== 10 && code !== 13 && code !== 9) return;
  }

  #value(): unknown {
    this.#whitespace();
    const code = this.#text.charCodeAt(this.#at);
    if (code === 34) return this.#string();
    if (code === 123) return this.#nested(() => this.#object());
    if (code === 91) return this.#nested(() => this.#array());
    if (code === 45 || isDigit(code)) return this.#number();
    if (this.#text.startsWith('true', this.#at)) return this.#literal(4, true);
    if (this.#text.startsWith('false', this.#at)) return this.#literal(5, false);
    if (this.#text.startsWith('null', this.#at)) return this.#literal(4, null);
    return this.#unexpected('a value');
  }

  #literal<T>(length: number, value: T): T {
    this.#at += length;
    return value;
  }

  #nested<T>(read: () => T): T {
    this.#depth += 1;
    if (this.#depth > MAX_JSON_DEPTH)
      this.#fail(`arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`, this.#at, 'too_deep');
    const value = read();
    this.#depth -= 1;
    return value;
  }

  #object(): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    this.#at += 1;
    this.#whitespace();
    if (this.#text.charCodeAt(this.#at) === 125) return this.#literal(1, object);
    for (;;) {
      this.#whitespace();
      const keyAt = this.#at;
      if (this.#text.charCodeAt(keyAt) !== 34) this.#unexpected('a key in double quotes');
      const key = this.#string();
      this.#whitespace();
      if (this.#text.charCodeAt(this.#at) !== 58) this.#unexpected('":" after a key');
      this.#at += 1;
      const value = this.#value();
      if (Object.hasOwn(object, key))
        this.#fail(`the key ${JSON.stringify(key)} twice in one object`, keyAt, 'duplicate_key', key);
      // An own property, as JSON.parse makes it: an assignment to "__proto__" would set the prototype instead.
      if (key === '__proto__')
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      else object[key] = value;
      this.#whitespace();
      const next = this.#text.charCodeAt(this.#at);
      if (next === 125) return this.#literal(1, object);
      if (next !== 44) this.#unexpected('"," or "}"');
      this.#at += 1;
    }
  }

  #array(): unknown[] {
    const array: unknown[] = [];
    this.#at += 1;
    this.#whitespace();
    if (this.#text.charCodeAt(this.#at) === 93) return this.#literal(1, array);
    for (;;) {
      array.push(this.#value());
      this.#whitespace();
      const next = this.#text.charCodeAt(this.#at);
      if (next === 93) return this.#literal(1, array);
      if (next !== 44) this.#unexpected('"," or "]"');
      this.#at += 1;
    }
  }

  /** A string: sliced as it is when it has no escape (most), else decoded by JSON.parse (which checks escapes). */
  #string(): string {
    const text = this.#text;
    const start = this.#at;
    let end = text.indexOf('"', start + 1);
    let escaped = false;
    for (;;) {
      if (end === -1) this.#fail('a string that is never closed', start);
      let backslashes = 0;
      while (text.charCodeAt(end - 1 - backslashes) === 92) backslashes += 1;
      if (backslashes % 2 === 0) break;
      escaped = true;
      end = text.indexOf('"', end + 1);
    }
    this.#at = end + 1;
    const raw = text.slice(start + 1, end);
    if (!escaped && raw.indexOf('\\') === -1) {
      if (CONTROL.test(raw)) this.#fail('a control character (a tab or a line break?) not escaped in a string', start);
      return raw;
    }
    let value: string;
    try {
      value = JSON.parse(text.slice(start, end + 1)) as string;
    } catch {
      this.#fail('a string with a bad escape or an unescaped control character', start);
    }
    if (value.indexOf('\u0000') !== -1) this.#fail('a NUL character (\\u0000) in a string', start, 'nul_character');
    return value;
  }

  #digits(): void {
    if (!isDigit(this.#text.charCodeAt(this.#at))) this.#unexpected('a digit');
    do this.#at += 1;
    while (isDigit(this.#text.charCodeAt(this.#at)));
  }

  /** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, kept as its text. */
  #number(): string {
    const text = this.#text;
    const start = this.#at;
    if (text.charCodeAt(this.#at) === 45) this.#at += 1;
    if (text.charCodeAt(this.#at) === 48) this.#at += 1;
    else this.#digits();
    if (text.charCodeAt(this.#at) === 46) {
      this.#at += 1;
      this.#digits();
    }
    const exponent = text.charCodeAt(this.#at);
    if (exponent === 101 || exponent === 69) {
      this.#at += 1;
      const sign = text.charCodeAt(this.#at);
      if (sign === 43 || sign === 45) this.#at += 1;
      this.#digits();
    }
    return NUMBER_MARK + text.slice(start, this.#at);
  }
}
