import type { Output } from '../../output/output.js';
import { gatherStatus, type StatusInput, type StatusSummary } from './status-gather.js';
import type { StatusRow } from './status-join.js';
import { nextSteps } from './status-verdict.js';
import type { KnownValues } from '../common/shell-word.js';

// `migrate status --json`: one JSON document, every account a row.

/**
 * The JSON document, streamed: rows are written page by page as the ledger is read (with
 * back-pressure), then the counts and lists, so a million accounts never sit in memory.
 */
export async function writeStatusJson(
  out: Output,
  input: Omit<StatusInput, 'onRow' | 'onPage'>,
  {
    known = {},
    head = {},
  }: {
    /** Values the hints use. */
    known?: KnownValues;
    /** Fields before the rows: the run configuration read and the service asked. */
    head?: Record<string, unknown>;
  } = {},
): Promise<StatusSummary> {
  const opening = Object.entries(head)
    .map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)},\n`)
    .join('');
  let chunk: string[] = [];
  let first = true;
  const onRow = (row: StatusRow): void => {
    chunk.push(`${first ? '' : ',\n'}    ${JSON.stringify(row)}`);
    first = false;
  };
  // The document starts with the first rows, after the service has answered: a run that fails
  // before (authentication, unknown supplier) prints nothing on stdout rather than half a document.
  let opened = false;
  const flush = async (): Promise<void> => {
    const text = `${opened ? '' : `{\n${opening}  "accounts": [\n`}${chunk.join('')}`;
    opened = true;
    chunk = [];
    if (text !== '') await out.write(text);
  };
  const summary = await gatherStatus({ ...input, onRow, onPage: flush });
  await flush();
  summary.next_steps = nextSteps(summary, known);
  const rest = JSON.stringify(summary, null, 2).slice(1);
  await out.write(`\n  ],${rest}\n`);
  return summary;
}
