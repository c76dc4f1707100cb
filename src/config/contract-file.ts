import { readFile } from 'node:fs/promises';
import { parse, YAMLParseError } from 'yaml';
import { UsageError } from '../errors.js';
import { compileContract, ContractError, type Contract } from '../schema/index.js';

// Reads the tenant's contract file (docs/real-platform.md "The tenant's contract"): the OpenAPI document the tenant
// serves at /data-import/schema/, saved as it comes (YAML, or JSON with ?format=json), loaded and compiled once per
// command. Every problem is a usage error naming the file: nothing is read or sent with a contract that cannot be
// read.

/** YAML anchors expanded at most this often: a document is data, never a "billion laughs". */
const MAX_ALIASES = 10_000;

function parseDocument(file: string, text: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  // JSON (the document fetched with ?format=json) is read by the JSON parser: several times faster than YAML's.
  if (body.trimStart().startsWith('{')) {
    try {
      return JSON.parse(body) as unknown;
    } catch (error) {
      throw new UsageError(`${file}: not valid JSON (${(error as Error).message}).`, 'contract_invalid', error);
    }
  }
  try {
    return parse(body, { maxAliasCount: MAX_ALIASES, uniqueKeys: true });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const line = error.linePos?.[0].line;
    const where = line === undefined ? '' : `, line ${line}`;
    throw new UsageError(
      `${file}: not a YAML or JSON document (${error.message.split('\n')[0] ?? error.code}${where}).`,
      'contract_invalid',
      error,
    );
  }
}

/** Reads, parses and compiles the contract at `file` (absolute); `given` says where it was named, for messages. */
export async function loadContractFile(file: string, given: string): Promise<Contract> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
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
