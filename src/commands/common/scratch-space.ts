import os from 'node:os';
import { errnoOf, FatalError } from '../../errors.js';
import { storageFailureCause } from '../../ledger/index.js';
import type { ExportFile } from '../../sources/index.js';

// The scratch space failing while an export is sorted or staged (the intake's external sort and scratch join,
// docs/limits.md "Scratch space"): full, a file-size limit, an I/O error. The operator's to fix, named with where
// and how much room the export needs, never an internal error. It is TMPDIR for validate, the state directory for
// push.

/** Free space to ask for, as a multiple of the export files' size (docs/limits.md "Scratch space": 1.4 measured). */
const SCRATCH_FACTOR = 2;

/** The FatalError (exit 3) for `error` when it is the scratch space failing; undefined for any other error. */
export function scratchSpaceError(
  error: unknown,
  scratchDir: string | undefined,
  files: readonly Pick<ExportFile, 'bytes'>[],
): FatalError | undefined {
  if (error instanceof FatalError) return undefined;
  const code = errnoOf(error);
  const cause = code === 'EFBIG' ? `a file-size limit (ulimit -f): ${code}` : storageFailureCause(error);
  if (cause === undefined) return undefined;
  const bytes = files.reduce((sum, file) => sum + file.bytes, 0);
  const where = scratchDir === undefined ? `TMPDIR (${os.tmpdir()})` : `the state directory ${scratchDir}`;
  const instead = scratchDir === undefined ? 'set TMPDIR to a directory with room' : 'give another --state';
  return new FatalError(
    `${where} could not be written while the export was sorted (${cause}): sorting this export needs about ` +
      `${megabytes(bytes * SCRATCH_FACTOR)} free there (${SCRATCH_FACTOR} times its files' ${megabytes(bytes)}). ` +
      `Free space there (or lift a file-size limit), or ${instead}, and run the same command again.`,
    'scratch_space_unwritable',
    error,
  );
}

const megabytes = (bytes: number): string =>
  `${(bytes / 1_000_000).toLocaleString('en-GB', { maximumFractionDigits: 1 })} MB`;
