import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { errnoOf, UsageError } from '../errors.js';
import { settingOf } from './precedence.js';
import { lineItemSchema, taxItemSchema, TENANT_SCOPES, type Contract, type Dialect } from '../schema/index.js';
import type { FileKind } from '../sources/kinds.js';
import { isJsonNumber, JsonSyntaxError, jsonNumberText, parseJson } from '../sources/json-value.js';
import { FIELDS, fieldType } from '../mapping/fields.js';
import { fieldProblems, mappingFileSchema, shapeProblems, type MappingFileInput } from '../mapping/mapping-file.js';
import { exportMappingOf, type ExportMapping } from '../mapping/mapping-rules.js';
import { loadContractFile } from './contract-file.js';

export const CONFIG_FILE_NAME = 'migrate.config.json';

/** Flags + environment + mapping file, validated once: everything `validate` and `push` need to read an export. */
export interface MigrateConfig extends ExportMapping {
  /** The mapping file's `dialect`, when it names one (docs/real-platform.md). */
  dialect: Dialect | undefined;
  /** The mapping file's `task_params` (the kraken dialect's v2 create). */
  taskParams: Record<string, unknown> | undefined;
}

export interface LoadMigrateConfigInput {
  /** --config; relative to cwd. When given, the file must exist. */
  configPath?: string;
  cwd: string;
  /** The export directory: its migrate.config.json is used first when --config is not given. */
  exportDir?: string;
  /** --supplier */
  supplier?: string;
  /** --contract; relative to cwd. Wins over the mapping file's `contract`. */
  contractPath?: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Finds and validates the mapping file: --config if given, else `migrate.config.json` in the
 * export directory, else in the working directory, else none (the default layout).
 */
export async function loadMigrateConfig(input: LoadMigrateConfigInput): Promise<MigrateConfig> {
  const located = await locateConfigFile(input);
  const file = located ? parseConfigFile(located.path, located.text) : {};
  const supplier = settingOf('supplier', input.supplier, input.env, file.import_supplier);
  const contract = await loadContract(input, file, located?.path);
  if (contract) {
    checkAgainstContract(contract.contract, contract.given, file, located?.path ?? '');
    if (supplier !== undefined) checkSupplier(contract.contract, supplier);
  }
  return {
    ...exportMappingOf(file, supplier, located?.path),
    dialect: file.dialect,
    taskParams: file.task_params,
    contract: contract?.contract,
  };
}

/** --contract (relative to the working directory), else the mapping file's `contract` (relative to that file). */
async function loadContract(
  input: LoadMigrateConfigInput,
  file: MappingFileInput,
  configFile: string | undefined,
): Promise<{ contract: Contract; given: string } | undefined> {
  if (input.contractPath !== undefined) {
    const given = `--contract ${input.contractPath}`;
    return { contract: await loadContractFile(path.resolve(input.cwd, input.contractPath), given), given };
  }
  if (file.contract === undefined || configFile === undefined) return undefined;
  const given = `"contract": ${JSON.stringify(file.contract)} in ${configFile}`;
  const absolute = path.resolve(path.dirname(configFile), file.contract);
  return { contract: await loadContractFile(absolute, given), given };
}

/**
 * The mapping file's tenant parts against the contract, before any record is read: a declared tenant field the
 * document does not define at its level (a typo, or a field of another level) and task_params it refuses.
 */
function checkAgainstContract(contract: Contract, given: string, file: MappingFileInput, configFile: string): void {
  const problems: string[] = [];
  for (const scope of TENANT_SCOPES) {
    const defined = contract.fieldsOf(scope);
    for (const name of Object.keys(file.tenant_fields?.[scope] ?? {}))
      if (!defined.has(name))
        problems.push(
          `tenant_fields.${scope}.${name}: the contract (${contract.title}) defines no field ${name} on ${scope}` +
            (defined.size > 0 ? ` (it defines ${[...defined].sort().join(', ')})` : ''),
        );
  }
  for (const issue of contract.check('taskParams', file.task_params ?? {}))
    problems.push(`task_params${issue.attr === '' ? '' : `.${issue.attr}`}: ${issue.detail}`);
  if (problems.length > 0)
    throw new UsageError(`${configFile || given}: ${problems.join('; ')}.`, 'config_contract_mismatch');
}

/**
 * The configured import supplier is the tenant's enum of supplier codes: checked once here, so that a code the
 * tenant does not know is one configuration error, not one error per record.
 */
function checkSupplier(contract: Contract, supplier: string): void {
  const issue = contract
    .check('accountPayload', { import_supplier: supplier })
    .find((found) => found.attr === 'import_supplier');
  if (issue)
    throw new UsageError(
      `the import supplier (--supplier, MIGRATE_SUPPLIER or "import_supplier" in the mapping file) does not fit the ` +
        `tenant's contract (${contract.title}): ${issue.detail}`,
      'config_contract_mismatch',
    );
}

/**
 * A contract describes the platform's own wire form (amounts as decimal strings, task_params on create): a run in the
 * spec dialect would break it in every body, so the combination is refused before anything is read.
 */
export function checkContractDialect(config: Pick<MigrateConfig, 'contract'>, dialect: Dialect): void {
  if (config.contract === undefined || dialect === 'kraken') return;
  throw new UsageError(
    `a tenant's contract (${config.contract.title}) describes the platform's own request forms, which only the ` +
      'kraken dialect sends; run with --dialect kraken (or "dialect": "kraken" in the mapping file).',
    'contract_needs_kraken_dialect',
  );
}

async function locateConfigFile(input: LoadMigrateConfigInput): Promise<{ path: string; text: string } | undefined> {
  if (input.configPath !== undefined) {
    const file = path.resolve(input.cwd, input.configPath);
    const text = await readText(file);
    if (text === undefined)
      throw new UsageError(`--config ${input.configPath}: no such file (looked for ${file}).`, 'config_not_found');
    return { path: file, text };
  }
  const candidates = [input.exportDir, input.cwd].filter((dir): dir is string => dir !== undefined);
  for (const dir of candidates) {
    const file = path.resolve(input.cwd, dir, CONFIG_FILE_NAME);
    const text = await readText(file);
    if (text !== undefined) return { path: file, text };
  }
  return undefined;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = errnoOf(error);
    // None there: missing, or a path through a file (an export "directory" that is a file, named as such later).
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new UsageError(`${file}: cannot be read (${code ?? String(error)}).`, 'config_unreadable', error);
  }
}

/** Parses and validates the file; every error names the key at fault. */
export function parseConfigFile(file: string, text: string): MappingFileInput {
  const parsed = mappingFileSchema.safeParse(readConfigJson(file, text));
  if (!parsed.success) throw new UsageError(`${file}: ${describeIssues(parsed.error)}`, 'config_invalid');
  const problems = Object.entries(parsed.data.mapping ?? {}).flatMap(([kind, mapping]) =>
    fieldProblems(kind as FileKind, mapping),
  );
  problems.push(...shapeProblems(parsed.data));
  for (const scope of TENANT_SCOPES) {
    for (const name of Object.keys(parsed.data.tenant_fields?.[scope] ?? {}))
      if (isSpecField(scope, name))
        problems.push({ key: `tenant_fields.${scope}.${name}`, message: 'is a field of the spec, not a tenant field' });
  }
  if (problems.length > 0) {
    throw new UsageError(
      `${file}: ${problems.map((problem) => `${problem.key}: ${problem.message}`).join('; ')}.`,
      'config_invalid',
    );
  }
  return parsed.data;
}

/** A field (or an object of fields, such as billing_address) the spec documents at a tenant scope. */
function isSpecField(scope: (typeof TENANT_SCOPES)[number], name: string): boolean {
  if (scope === 'line_items') return Object.hasOwn(lineItemSchema.shape, name);
  if (scope === 'tax_items') return Object.hasOwn(taxItemSchema.shape, name);
  return (
    fieldType(scope, name) !== undefined || Object.keys(FIELDS[scope]).some((field) => field.startsWith(`${name}.`))
  );
}

/**
 * The mapping file read by the export's own JSON parser (sources/json-value.ts): a key given twice is an error, not
 * "the last one wins", and a number in `constants`, `defaults` or a value map keeps its text, since it fills a
 * payload field as an export cell does (`"billing_customer_reference": 1.10` is sent as "1.10"). Every other number
 * is a plain number.
 */
function readConfigJson(file: string, text: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  try {
    return plainNumbers(parseJson(body), []);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const line = body.slice(0, error.offset).split('\n').length;
    throw new UsageError(`${file}: not valid JSON (${error.message}, line ${line}).`, 'config_invalid', error);
  }
}

/** Keys under which a number is a cell value (kept as parsed): mapping.KIND.constants, .defaults, .values. */
const CELL_KEYS: ReadonlySet<string> = new Set(['constants', 'defaults', 'values']);

function plainNumbers(value: unknown, path: string[]): unknown {
  if (path.length === 3 && path[0] === 'mapping' && CELL_KEYS.has(path[2] ?? '')) return value;
  if (isJsonNumber(value)) return Number(jsonNumberText(value));
  if (Array.isArray(value)) return value.map((item, index) => plainNumbers(item, [...path, String(index)]));
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const plain = plainNumbers(inner, [...path, key]);
    if (key === '__proto__')
      Object.defineProperty(copy, key, { value: plain, enumerable: true, writable: true, configurable: true });
    else copy[key] = plain;
  }
  return copy;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .flatMap((issue) => {
      const key = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((name) => `${key ? `${key}.` : ''}${name}: unknown key`);
      return [`${key || '(top level)'}: ${issue.message}`];
    })
    .join('; ');
}
