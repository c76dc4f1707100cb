import {
  chmodSync,
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';

// Tests that run the binary as another user (root's tests run it as `nobody`) need a binary that user can reach: the
// checkout may sit where only its owner may enter (a clone in a `mktemp -d` directory, root's home), and then every
// path inside it is refused before the binary starts. The command is laid out again where the test says, which must be
// a directory the other user can enter: what bin/migrate.js loads (bin/, dist/, node_modules/, package.json), as hard
// links to the checkout's files (a copy where the two are on different file systems).

const ROOT = join(import.meta.dirname, '..', '..');
const RUNS_FROM = ['bin', 'dist', 'node_modules', 'package.json'];

/** bin/migrate.js in `dir` (made, mode 0755), runnable by any user who can enter `dir`. */
export function binaryForAnotherUser(dir: string): string {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  for (const name of RUNS_FROM) linkTree(join(ROOT, name), join(dir, name));
  return join(dir, 'bin', 'migrate.js');
}

function linkTree(from: string, to: string): void {
  const stat = lstatSync(from);
  if (stat.isSymbolicLink()) return symlinkSync(readlinkSync(from), to);
  if (!stat.isDirectory()) return linkOrCopy(from, to);
  mkdirSync(to, { mode: 0o755 });
  for (const name of readdirSync(from)) linkTree(join(from, name), join(to, name));
}

/** A hard link, or a copy across file systems. */
function linkOrCopy(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    copyFileSync(source, target);
  }
}
