import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ValidationIssue } from './issues.js';
import { asObject, type Raw } from './read.js';
import { componentName, normalizeDocument, type NormalizedDocument } from './contract-normalize.js';
import { contractIssues } from './contract-issues.js';
import type { TenantScope } from './tenant-fields.js';
import { messageOf } from '../errors.js';

// The tenant's contract: the OpenAPI document a tenant of the platform publishes for the data-import service (at
// /data-import/schema/ on its API host), compiled once into one validator per request body the tool sends. Every
// body is checked against the document's schema for its endpoint before it is sent (migrate validate, push) and
// when it arrives (the sandbox rehearsing the tenant); the violations come back as the service's issue items.

/** The request bodies the contract checks; `accountPayload` and `taskParams` are the two parts of a create. */
export type ContractRequest =
  | 'createAccount'
  | 'validateAccount'
  | 'accountPayload'
  | 'taskParams'
  | 'notes'
  | 'transactions'
  | 'statements'
  | 'paymentInstruction';

/** The endpoints the tool sends to (spec "Endpoints"), each a POST with a JSON body. */
export const CONTRACT_ENDPOINTS = {
  createAccount: '/v2/data-import/accounts/',
  validateAccount: '/v2/data-import/accounts/validate/',
  notes: '/v1/data-import/notes/create/',
  transactions: '/v1/data-import/transactions/create/',
  statements: '/v1/data-import/historical-statements/create/',
  paymentInstruction: '/v1/data-import/payment-instruction/create/',
} as const;
type EndpointName = keyof typeof CONTRACT_ENDPOINTS;

/** A document that cannot serve as a contract (not OpenAPI, an endpoint missing); the message says which. */
export class ContractError extends Error {
  override name = 'ContractError';
}

export interface Contract {
  /** The document's title and version, for messages and the run's summary. */
  readonly title: string;
  /** Rules of the document that could not be kept (each is left unchecked). */
  readonly warnings: readonly string[];
  /** The body's violations of the document (none: []); attrs as the service gives them. */
  check(request: ContractRequest, body: unknown): ValidationIssue[];
  /** The fields the document defines where a scope's records go (the union over variants). */
  fieldsOf(scope: TenantScope): ReadonlySet<string>;
  /**
   * Whether the document defines the field at `attr` (a service attr of the request's body; account bodies relative
   * to the payload). A field it does not define cannot be required of this tenant's payloads.
   */
  defines(request: ContractRequest, attr: string): boolean;
}

// ajv-formats is CommonJS: its function is the module itself under Node's interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv, options: { mode: 'fast' }) => Ajv;

/** Where each scope's records sit: the endpoint's body and the path inside it (`[]`: items of a list). */
const SCOPE_PATHS: Readonly<Record<TenantScope, [EndpointName, string[]]>> = {
  accounts: ['createAccount', ['payload']],
  customers: ['createAccount', ['payload', 'customers', '[]']],
  supply_addresses: ['createAccount', ['payload', 'supply_addresses', '[]']],
  notes: ['notes', ['notes', '[]']],
  transactions: ['transactions', ['transactions', '[]']],
  line_items: ['transactions', ['transactions', '[]', 'line_items', '[]']],
  tax_items: ['transactions', ['transactions', '[]', 'tax_items', '[]']],
  statements: ['statements', ['statements', '[]']],
  payment_instructions: ['paymentInstruction', []],
};

function requestSchemaOf(document: Raw, name: EndpointName): unknown {
  const path = CONTRACT_ENDPOINTS[name];
  const paths = asObject(document['paths']) ?? {};
  const item = asObject(paths[path]) ?? asObject(paths[path.replace(/\/$/, '')]);
  const content = asObject(asObject(asObject(item?.['post'])?.['requestBody'])?.['content']);
  const json = asObject(content?.['application/json']) ?? asObject(Object.values(content ?? {})[0]);
  return json?.['schema'];
}

/** The schemas a node stands for: references followed, `allOf`, `oneOf` and `anyOf` opened. */
function expand(node: unknown, components: Raw, depth = 0): Raw[] {
  const object = asObject(node);
  if (!object || depth > 12) return [];
  const name = componentName(object['$ref']);
  if (name !== undefined) return expand(components[name], components, depth + 1);
  const parts = ['allOf', 'oneOf', 'anyOf'].flatMap((key) =>
    Array.isArray(object[key]) ? (object[key] as unknown[]).flatMap((item) => expand(item, components, depth + 1)) : [],
  );
  return [object, ...parts];
}

/** The schemas at `path` below `root` (`[]` or a number: the items of a list). */
function schemasAt(root: unknown, path: readonly string[], components: Raw): Raw[] {
  let nodes = expand(root, components);
  for (const step of path)
    nodes = nodes.flatMap((node) =>
      expand(step === '[]' || /^\d+$/.test(step) ? node['items'] : asObject(node['properties'])?.[step], components),
    );
  return nodes;
}

function fieldsAt(root: unknown, path: string[], components: Raw): Set<string> {
  return new Set(schemasAt(root, path, components).flatMap((node) => Object.keys(asObject(node['properties']) ?? {})));
}

/** Each request's body in the document, and where its attrs start inside it. */
const REQUEST_ROOTS: Readonly<Record<ContractRequest, [EndpointName, string[]]>> = {
  createAccount: ['createAccount', ['payload']],
  validateAccount: ['validateAccount', ['payload']],
  accountPayload: ['createAccount', ['payload']],
  taskParams: ['createAccount', ['task_params']],
  notes: ['notes', []],
  transactions: ['transactions', []],
  statements: ['statements', []],
  paymentInstruction: ['paymentInstruction', []],
};

class CompiledContract implements Contract {
  readonly title: string;
  readonly warnings: readonly string[];
  readonly #validators: Record<ContractRequest, ValidateFunction>;
  readonly #normalized: NormalizedDocument;
  readonly #fields: Record<TenantScope, Set<string>>;
  readonly #document: Raw;
  readonly #components: Raw;

  constructor(document: Raw, source: string) {
    this.#document = document;
    const info = asObject(document['info']);
    const text = (value: unknown): string => (typeof value === 'string' ? value : '');
    this.title = `${text(info?.['title']) || source} ${text(info?.['version'])}`.trim();
    const components = asObject(asObject(document['components'])?.['schemas']) ?? {};
    this.#components = components;
    const roots = this.#roots(document, source);
    this.#normalized = normalizeDocument(document);
    this.warnings = this.#normalized.warnings;
    // Each referenced schema compiled once and called, not inlined or optimised: a published document's account
    // tree compiles in a third of the time (about 150 ms instead of 410), and validates as fast (measured). The
    // schemas are this module's rewrite, not the document's text: checking them against the meta-schema would only
    // cost (it took a third of the compile).
    const ajv = new Ajv({
      validateSchema: false,
      allErrors: true,
      verbose: true,
      strict: false,
      unicodeRegExp: false,
      inlineRefs: false,
      code: { optimize: false },
    });
    addFormats(ajv, { mode: 'fast' });
    for (const format of this.#normalized.formats) if (!ajv.formats[format]) ajv.addFormat(format, true);
    ajv.addSchema({ $id: 'contract', definitions: this.#normalized.definitions });
    const compile = (name: EndpointName, suffix = ''): ValidateFunction =>
      ajv.compile({ $ref: `contract#/definitions/${roots[name]}${suffix}` });
    this.#validators = {
      createAccount: compile('createAccount'),
      validateAccount: compile('validateAccount'),
      accountPayload: compile('createAccount', '/properties/payload'),
      taskParams: compile('createAccount', '/properties/task_params'),
      notes: compile('notes'),
      transactions: compile('transactions'),
      statements: compile('statements'),
      paymentInstruction: compile('paymentInstruction'),
    };
    this.#fields = Object.fromEntries(
      Object.entries(SCOPE_PATHS).map(([scope, [endpoint, path]]) => [
        scope,
        fieldsAt(requestSchemaOf(document, endpoint), path, components),
      ]),
    ) as Record<TenantScope, Set<string>>;
  }

  /** The component each endpoint's body is (a document's bodies are references to its components). */
  #roots(document: Raw, source: string): Record<EndpointName, string> {
    const missing: string[] = [];
    const roots = Object.fromEntries(
      (Object.keys(CONTRACT_ENDPOINTS) as EndpointName[]).map((name) => {
        const schema = requestSchemaOf(document, name);
        const component = componentName(asObject(schema)?.['$ref']);
        if (component === undefined) missing.push(`POST ${CONTRACT_ENDPOINTS[name]}`);
        return [name, component ?? ''];
      }),
    ) as Record<EndpointName, string>;
    if (missing.length > 0)
      throw new ContractError(
        `${source}: the document defines no JSON request body (a reference to components.schemas) for ` +
          `${missing.join(', ')}; is it the tenant's data-import document (/data-import/schema/)?`,
      );
    const create = asObject(asObject(asObject(document['components'])?.['schemas'])?.[roots.createAccount]);
    for (const part of ['payload', 'task_params'])
      if (asObject(asObject(create?.['properties'])?.[part]) === undefined)
        throw new ContractError(`${source}: the body of POST ${CONTRACT_ENDPOINTS.createAccount} has no ${part}.`);
    return roots;
  }

  check(request: ContractRequest, body: unknown): ValidationIssue[] {
    const validate = this.#validators[request];
    if (validate(body)) return [];
    return contractIssues(validate.errors ?? [], {
      labels: this.#normalized.labels,
      definitions: this.#normalized.definitions,
      stripPayload: request === 'createAccount' || request === 'validateAccount',
    });
  }

  fieldsOf(scope: TenantScope): ReadonlySet<string> {
    return this.#fields[scope];
  }

  defines(request: ContractRequest, attr: string): boolean {
    const [endpoint, start] = REQUEST_ROOTS[request];
    const path = [...start, ...(attr === '' ? [] : attr.split('.'))];
    return schemasAt(requestSchemaOf(this.#document, endpoint), path, this.#components).length > 0;
  }
}

/**
 * Compiles a parsed OpenAPI 3.0 document (YAML or JSON, read by the caller). `source` names it in messages. Throws
 * ContractError for a document that is not one.
 */
export function compileContract(document: unknown, source: string): Contract {
  const object = asObject(document);
  if (!object || typeof object['openapi'] !== 'string' || !object['openapi'].startsWith('3.'))
    throw new ContractError(
      `${source}: not an OpenAPI 3 document (no "openapi: 3.x" at its top); give the tenant's data-import document.`,
    );
  try {
    return new CompiledContract(object, source);
  } catch (error) {
    if (error instanceof ContractError) throw error;
    // A reference to a schema the document lacks, a keyword the validator cannot compile.
    throw new ContractError(`${source}: its schemas cannot be compiled (${messageOf(error)}).`);
  }
}
