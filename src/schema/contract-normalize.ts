import { asObject, type Raw } from './read.js';

// A tenant's OpenAPI 3.0 document (docs/real-platform.md "The tenant's contract") -> plain JSON Schema that Ajv
// compiles, written once when the contract loads. Published documents hold what a JSON Schema validator does not
// read as OpenAPI means it, so each is rewritten here instead of refused:
// - `nullable: true` beside a type, an enum or an `allOf` wrapper (and, without any type, on a free value);
// - enums listing `null` (a choice field that allows none), with or without `nullable`;
// - `oneOf` keyed by a `discriminator` whose variants each list every value of the key (a transaction's `type`
//   holds all five types in each variant), and discriminators keyed by a tenant setting that no payload carries;
// - OpenAPI's boolean `exclusiveMinimum`/`exclusiveMaximum`, vendor keywords (`x-...`), HTML descriptions.
// Every object that lists its properties refuses others: the platform drops a field it does not know without a
// word, so a field the document does not define would be lost, never checked.

/** Where a node came from, in the document's own names (`EnergyCharge.reason`), for messages. */
export type Labels = WeakMap<object, string>;

export interface NormalizedDocument {
  /** components.schemas, rewritten; referenced as `#/definitions/NAME`. */
  definitions: Record<string, Raw>;
  labels: Labels;
  /** Formats the document uses, to tell the validator about the ones it does not know. */
  formats: Set<string>;
  /** Rules that could not be kept (a pattern that is no regular expression here), for the user to hear. */
  warnings: string[];
}

/** Keywords whose meaning is the same in OpenAPI 3.0 and JSON Schema: copied as they are. */
const COPIED = [
  'type',
  'enum',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'required',
  'minProperties',
  'maxProperties',
] as const;

const COMPONENT_REF = '#/components/schemas/';

export function definitionRef(name: string): string {
  return `#/definitions/${name}`;
}

/** `#/components/schemas/X` -> `X`; undefined for a reference outside the components. */
export function componentName(ref: unknown): string | undefined {
  return typeof ref === 'string' && ref.startsWith(COMPONENT_REF) ? ref.slice(COMPONENT_REF.length) : undefined;
}

class Normalizer {
  readonly labels: Labels = new WeakMap();
  readonly formats = new Set<string>();
  readonly warnings: string[] = [];
  readonly #components: Raw;

  constructor(components: Raw) {
    this.#components = components;
  }

  node(value: unknown, label: string): unknown {
    if (typeof value === 'boolean') return value;
    const node = asObject(value);
    if (!node) return {};
    const name = componentName(node['$ref']);
    if (name !== undefined) return { $ref: definitionRef(name) };
    if (typeof node['$ref'] === 'string') {
      this.warnings.push(`${label}: the reference ${node['$ref']} is outside components.schemas; not checked.`);
      return {};
    }
    const out = this.#copy(node, label);
    this.#composition(node, out, label);
    return this.#nullable(node, out, label);
  }

  #copy(node: Raw, label: string): Raw {
    const out: Raw = {};
    for (const key of COPIED) if (node[key] !== undefined) out[key] = node[key];
    if (typeof out['format'] === 'string') this.formats.add(out['format']);
    this.#bounds(node, out);
    this.#pattern(node, out, label);
    const properties = asObject(node['properties']);
    if (properties) {
      const copied: Raw = {};
      for (const [key, inner] of Object.entries(properties)) copied[key] = this.node(inner, `${label}.${key}`);
      out['properties'] = copied;
      // A field the document does not define would be dropped by the platform without a word.
      if (node['additionalProperties'] === undefined) out['additionalProperties'] = false;
    }
    const extra = node['additionalProperties'];
    if (extra !== undefined) out['additionalProperties'] = this.node(extra, `${label}{}`);
    if (node['items'] !== undefined) out['items'] = this.node(node['items'], `${label}[]`);
    return out;
  }

  /** OpenAPI 3.0: `exclusiveMinimum: true` qualifies `minimum`; JSON Schema gives the bound itself. */
  #bounds(node: Raw, out: Raw): void {
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      const value = node[flag];
      if (typeof value === 'number') out[flag] = value;
      else if (value === true && typeof node[bound] === 'number') {
        out[flag] = node[bound];
        delete out[bound];
      }
    }
  }

  #pattern(node: Raw, out: Raw, label: string): void {
    const pattern = node['pattern'];
    if (typeof pattern !== 'string') return;
    try {
      new RegExp(pattern);
      out['pattern'] = pattern;
    } catch {
      this.warnings.push(`${label}: the pattern ${pattern} is not a regular expression JavaScript reads; not checked.`);
    }
  }

  #composition(node: Raw, out: Raw, label: string): void {
    for (const key of ['allOf', 'anyOf'] as const) {
      const list = node[key];
      if (Array.isArray(list)) out[key] = list.map((item) => this.node(item, label));
    }
    if (node['not'] !== undefined) out['not'] = this.node(node['not'], label);
    const oneOf = node['oneOf'];
    if (!Array.isArray(oneOf)) return;
    const discriminator = asObject(node['discriminator']);
    const tag = discriminator?.['propertyName'];
    const mapping = asObject(discriminator?.['mapping']);
    if (typeof tag === 'string' && mapping) this.#tagged(out, tag, mapping, oneOf, label);
    else out['oneOf'] = oneOf.map((item) => this.node(item, label));
  }

  /**
   * `oneOf` with a discriminator: the variant named by the key's value, and only its errors (a plain `oneOf` would
   * report every variant's). A key that no variant defines is a tenant setting, not a payload field (Business by
   * `enforce_business_contracts_exist`): the payload is read against the variants together.
   */
  #tagged(out: Raw, tag: string, mapping: Raw, oneOf: unknown[], label: string): void {
    const entries = Object.entries(mapping).filter(
      (entry): entry is [string, string] => componentName(entry[1]) !== undefined,
    );
    const variants = oneOf.map((item) => componentName(asObject(item)?.['$ref'])).filter((name) => name !== undefined);
    const carried = variants.some(
      (name) => asObject(asObject(this.#components[name])?.['properties'])?.[tag] !== undefined,
    );
    if (!carried) {
      Object.assign(out, this.#merged(variants));
      return;
    }
    const keys = entries.map(([key]) => key);
    const key = { enum: keys };
    this.labels.set(key, `${label}.${tag}`);
    out['type'] = 'object';
    out['required'] = [tag];
    out['properties'] = { [tag]: key };
    out['allOf'] = entries.map(([value, ref]) => ({
      if: { properties: { [tag]: { const: value } }, required: [tag] },
      then: { $ref: definitionRef(componentName(ref) ?? '') },
    }));
  }

  /** Variants chosen by a tenant setting: any field of either, and what every one of them requires. */
  #merged(variants: string[]): Raw {
    const properties: Raw = {};
    let required: string[] | undefined;
    for (const name of variants) {
      const variant = asObject(this.#components[name]) ?? {};
      for (const [key, inner] of Object.entries(asObject(variant['properties']) ?? {}))
        properties[key] ??= this.node(inner, `${name}.${key}`);
      const own = Array.isArray(variant['required']) ? (variant['required'] as string[]) : [];
      required = required === undefined ? own : required.filter((field) => own.includes(field));
    }
    return { type: 'object', properties, additionalProperties: false, ...(required?.length ? { required } : {}) };
  }

  /** `nullable` and enums that list null: null is one more allowed value. */
  #nullable(node: Raw, out: Raw, label: string): unknown {
    const enumHasNull = Array.isArray(out['enum']) && (out['enum'] as unknown[]).includes(null);
    if (node['nullable'] !== true && !enumHasNull) return this.#label(out, label);
    if (Array.isArray(out['enum']) && !enumHasNull) out['enum'] = [...(out['enum'] as unknown[]), null];
    if (typeof out['type'] === 'string') {
      out['type'] = [out['type'], 'null'];
      return this.#label(out, label);
    }
    if (out['type'] !== undefined || out['enum'] !== undefined || Object.keys(out).length === 0)
      return this.#label(out, label);
    // A wrapper (`allOf: [$ref]`) or a constraint without a type: checked only when the value is not null.
    const wrapper = { if: { not: { type: 'null' } }, then: this.#label(out, label) };
    return this.#label(wrapper, label);
  }

  #label(out: Raw, label: string): Raw {
    this.labels.set(out, label);
    return out;
  }
}

/** Rewrites every schema of components.schemas; a document without them has nothing to check. */
export function normalizeDocument(document: Raw): NormalizedDocument {
  const components = asObject(asObject(document['components'])?.['schemas']) ?? {};
  const normalizer = new Normalizer(components);
  const definitions: Record<string, Raw> = {};
  for (const [name, schema] of Object.entries(components))
    definitions[name] = asObject(normalizer.node(schema, name)) ?? {};
  return {
    definitions,
    labels: normalizer.labels,
    formats: normalizer.formats,
    warnings: normalizer.warnings,
  };
}
