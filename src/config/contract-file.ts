import { readFile } from 'node:fs/promises';
import { load, YAMLException } from 'js-yaml';
import { errnoOf, messageOf, UsageError } from '../errors.js';
import { compileContract, ContractError, type Contract } from '../schema/index.js';

// Reads the tenant's contract file (docs/real-platform.md "The tenant's contract"): the OpenAPI document the tenant
// serves at /data-import/schema/, saved as it comes (YAML, or JSON with ?format=json), loaded and compiled once per
// command. Every problem is a usage error naming the file: nothing is read or sent with a contract that cannot be
// read.

/**
 * Values a document may hold, counted as they are reached: YAML aliases share one value wherever they point, so a
 * document of a few lines can stand for billions of values ("billion laughs"); the largest published documents hold
 * about 200,000.
 */
const MAX_VALUES = 5_000_000;

/** Counts the document's values (an aliased part once per place it is used); refuses one past MAX_VALUES. */
function checkSize(file: string, document: unknown): void {
  const pending: unknown[] = [document];
  let values = 0;
  while (pending.length > 0) {
    const value = pending.pop();
    values += 1;
    if (values > MAX_VALUES)
      throw new UsageError(
        `${file}: the document holds more than ${MAX_VALUES.toLocaleString('en-GB')} values ` +
          `(YAML aliases repeating a ` +
          'part?); a tenant document holds far fewer.',
        'contract_invalid',
      );
    if (typeof value === 'object' && value !== null)
      for (const inner of Object.values(value) as unknown[]) pending.push(inner);
  }
}

function parseDocument(file: string, text: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  // JSON (the document fetched with ?format=json) is read by the JSON parser: several times faster still.
  if (body.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(body);
      return parsed;
    } catch (error) {
      throw new UsageError(`${file}: not valid JSON (${messageOf(error)}).`, 'contract_invalid', error);
    }
  }
  try {
    const document = load(body);
    checkSize(file, document);
    return document;
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    const where = error.mark === undefined ? '' : `, line ${error.mark.line + 1}`;
    throw new UsageError(`${file}: not a YAML or JSON document (${error.reason}${where}).`, 'contract_invalid', error);
  }
}

/** Reads, parses and compiles the contract at `file` (absolute); `given` says where it was named, for messages. */
export async function loadContractFile(file: string, given: string): Promise<Contract> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = errnoOf(error) ?? String(error);
    throw new UsageError(
      `${given}: cannot be read (${code === 'ENOENT' ? `no such file: ${file}` : code}).`,
      'contract_unreadable',
      error,
    );
  }
  try {
    return compileContract(parseDocument(file, text), file);
  } catch (error) {
    if (error instanceof ContractError) throw new UsageError(error.message, 'contract_invalid', error);
    throw error;
  }
}
