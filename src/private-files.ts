import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { errnoOf } from './errors.js';
import { refuseUntrustedPath } from './trusted-path.js';

// Where the tool keeps customers' data for a while (docs/data-protection.md "Every place the tool writes"): the shape
// engine's database and spill files, the scratch join, spooled and sorted rows, a PostgreSQL ledger's working copy.
// Each is a directory of its own, mode 0700 whatever the umask, named `migrate-<name>-<pid>@<host>-<random>`: removed
// when the command ends, on a stop signal too, and, when a process was killed before it could (SIGKILL, the OOM
// killer), by the next command that starts on the same host, which finds the process named in it gone. The host is in
// the name because a state directory (or a TMPDIR) may be shared: a pid is only known on its own machine.

/** The mode of every file the tool writes that holds customers' data: its user's alone. */
export const PRIVATE_FILE_MODE = 0o600;
/** The mode of every directory the tool makes. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * `migrate-<name>-<pid>@<host>-<random>`: the name is lower-case words (dots allowed), the pid digits, the host as
 * `thisHost` writes it. Without a host (what the scratch join of earlier versions left): this host's.
 */
const LEFT_DIR = /^migrate-([a-z][a-z.]*(?:-[a-z][a-z.]*)*)-([1-9][0-9]*)(?:@([A-Za-z0-9._-]{1,64}))?-[A-Za-z0-9]+$/;

/** This host's name as directory names carry it: letters, digits, dots and dashes kept, anything else `_`. */
const thisHost = (): string =>
  hostname()
    .replace(/[^A-Za-z0-9.-]/g, '_')
    .slice(0, 64) || 'localhost';

/** The directories (and shaped output files) this process holds: removed at once where it must stop now. */
const held = new Set<string>();

/** Parents found trusted by this process. */
const trusted = new Set<string>();

/**
 * A new directory `<parent>/migrate-<name>-<pid>@<host>-XXXXXX`, 0700, removed by `removePrivate` (or a later
 * sweep). The parent must be one that no other user can change (or sticky, as /tmp is): in a directory others can
 * write, another user could move the directory away while it is written and keep the customers' data the tool then
 * believes removed.
 */
export function makePrivateDir(parent: string, name: string): string {
  if (!trusted.has(parent)) {
    // Judged as the directory to be made: its parent may be sticky (/tmp), as a directory above a file may.
    const what = parent === tmpdir() ? 'the scratch directory (in TMPDIR)' : 'the scratch directory';
    refuseUntrustedPath({ what, path: path.join(parent, `migrate-${name}-${process.pid}@${thisHost()}`) });
    trusted.add(parent);
  }
  const dir = mkdtempSync(path.join(parent, `migrate-${name}-${process.pid}@${thisHost()}-`));
  chmodSync(dir, PRIVATE_DIR_MODE);
  held.add(dir);
  return dir;
}

/**
 * `mkdir -p`, every directory made 0700 (one the user gave that exists keeps its mode), one level at a time. Node's
 * own recursive mkdir never returns on a path it cannot make under a pseudo file system (`--out /proc/x`: ENOENT for
 * the child, EEXIST for the parent, again and again); here each missing parent is made once, and the failure is the
 * error for the path given.
 */
export function makePrivateDirs(dir: string): void {
  const missing: string[] = [];
  let current = path.resolve(dir);
  while (!existsSync(current)) {
    missing.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const place of missing.reverse()) {
    try {
      mkdirSync(place, { mode: PRIVATE_DIR_MODE });
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
    }
  }
  // A file where the directory should be: mkdir's own EEXIST names it, as `mkdir -p` would.
  if (!statSync(dir).isDirectory()) mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
}

/** Marks a file or directory as this process's, to be removed if it must stop at once (see `removeHeldNow`). */
export function holdPrivate(place: string): void {
  held.add(place);
}

/** The place is kept (a finished output) or was removed by its owner: no longer removed at a stop. */
export function releasePrivate(place: string): void {
  held.delete(place);
}

/** Removes a place made by `makePrivateDir` (or held), whole. */
export function removePrivate(place: string): void {
  rmSync(place, { recursive: true, force: true });
  held.delete(place);
}

/** Removes every place this process holds, now: a stop that cannot wait for the command's own cleanup. */
export function removeHeldNow(): void {
  for (const place of held) {
    try {
      removePrivate(place);
    } catch {
      // Removed by the command meanwhile, or not removable: the next command's sweep tries again.
    }
  }
}

/**
 * Removes, in `parent`, the directories named as `makePrivateDir` names them whose process on this host no longer
 * exists: only directories (a symbolic link of that name is left alone, never followed), only the current user's, only
 * that pattern; another host's are left to it. A directory whose pid runs (this process, another of the user's, or a
 * process of another user's that reuses the number) stays; nothing is removed in a parent that another user can change
 * (without the sticky bit). Never throws: one that cannot be read or removed is left.
 */
export function sweepLeftDirs(parent: string): void {
  const uid = process.getuid?.();
  const host = thisHost();
  let names: string[];
  try {
    // Only where no one else can swap an entry for a link between its check and its removal.
    refuseUntrustedPath({ what: 'the scratch directory', path: path.join(parent, 'migrate-') });
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = LEFT_DIR.exec(name);
    const pid = Number(match?.[2] ?? Number.NaN);
    if (match?.[3] !== undefined && match[3] !== host) continue;
    if (!Number.isSafeInteger(pid) || pid === process.pid || processExists(pid)) continue;
    const place = path.join(parent, name);
    try {
      const stats = lstatSync(place);
      if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) continue;
      rmSync(place, { recursive: true, force: true });
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return errnoOf(error) === 'EPERM';
  }
}
