import { InputError } from '../errors.js';
import type { ExportMapping } from '../mapping/mapping-rules.js';
import { readCsv, readJsonArray, readNdjson, type ExportFile } from '../sources/index.js';

// An accounts file with no account (a CSV header alone, `[]`, an empty NDJSON file) creates nothing: most often a
// failed or truncated export, which a push would end as "everything done". It is refused (exit 2) unless the run is
// meant to add post-import records to accounts imported earlier (--allow-no-accounts). Read up to its first record.

export const ALLOW_NO_ACCOUNTS = '--allow-no-accounts';

/** Throws an InputError when the export's accounts file holds no record and `allowed` is false. */
export async function refuseNoAccounts(
  files: readonly ExportFile[],
  config: ExportMapping,
  allowed: boolean,
): Promise<void> {
  const accounts = files.find((file) => file.kind === 'accounts');
  if (allowed || accounts === undefined || (await hasRecord(accounts, config))) return;
  throw new InputError(
    accounts.file,
    undefined,
    `holds no account${accounts.format === 'csv' ? ' (only its header)' : ''}: an export without accounts creates ` +
      'nothing (a failed or cut-short export?). If this export only adds post-import records to accounts imported ' +
      `earlier, run again with ${ALLOW_NO_ACCOUNTS}.`,
    'input_no_account_rows',
  );
}

async function hasRecord(file: ExportFile, config: ExportMapping): Promise<boolean> {
  const mapping = config.mapping[file.kind];
  const options = { file: file.file, encoding: mapping.encoding };
  const records =
    file.format === 'csv'
      ? readCsv(file.absolutePath, { ...options, delimiter: mapping.delimiter })
      : file.format === 'json'
        ? readJsonArray(file.absolutePath, options)
        : readNdjson(file.absolutePath, options);
  try {
    // A CSV file's first row is its header; a file without one is named by the reader ("is empty").
    if (file.format === 'csv' && (await records.next()).done === true) return true;
    return (await records.next()).done !== true;
  } finally {
    await records.return(undefined);
  }
}
