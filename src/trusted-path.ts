import { readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from './errors.js';

// The files that decide where the customers' data and the key go (the run configuration, a key or token file) and
// the state directory that holds the ledger are trusted as ssh trusts its own files (StrictModes): owned by the user
// running the tool or by root, writable by no one else, and so is every directory above them unless it has the sticky
// bit (as /tmp has). A planted `migrate.run.json` in a shared working directory would otherwise send the key and every
// customer to the host it names. A secret's file must also be unreadable by others.

/** What the path is, as messages name it (e.g. "run configuration", "--api-key-file"). */
export interface TrustedPath {
  readonly what: string;
  readonly path: string;
  /** The file holds a secret: no one else may read it either. */
  readonly secret?: boolean;
}

const modeOf = (stats: Stats): string => (stats.mode & 0o7777).toString(8).padStart(4, '0');

/** The login name of a uid, from /etc/passwd, else `uid N`. */
function ownerName(uid: number): string {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.split(':')[2] === String(uid));
    const name = line?.split(':')[0];
    if (name !== undefined && name !== '') return `${name} (uid ${uid})`;
  } catch {
    // No passwd file to read (a minimal container): the uid alone names the owner.
  }
  return `uid ${uid}`;
}

function refusal(target: TrustedPath, place: string, stats: Stats, why: string, mend: string): UsageError {
  const subject = place === target.path ? `${target.what} ${target.path}` : `${target.what} ${target.path}: ${place}`;
  return new UsageError(
    `${subject} ${why} (owner ${ownerName(stats.uid)}, mode ${modeOf(stats)}); the tool trusts only files that you ` +
      `or root own and no one else can change: ${mend}`,
    'untrusted_path',
  );
}

/** The directory (or file) `stats` describes is owned by `uid` or root and writable by no one else. */
function checkOne(target: TrustedPath, place: string, stats: Stats, uid: number, isTop: boolean): void {
  if (stats.uid !== uid && stats.uid !== 0)
    throw refusal(target, place, stats, 'is owned by another user', `use one of your own, or chown ${place}`);
  const sticky = stats.isDirectory() && (stats.mode & 0o1000) !== 0;
  if ((stats.mode & 0o022) !== 0 && !(sticky && !isTop))
    throw refusal(target, place, stats, 'can be changed by other users', `chmod go-w ${place}`);
  if (isTop && target.secret === true && (stats.mode & 0o077) !== 0)
    throw refusal(target, place, stats, 'can be read by other users', `chmod 600 ${place}`);
}

/**
 * Refuses (exit 2) a path that another user owns or can change, or a directory above it that another user can change
 * (without the sticky bit). A path that does not exist yet is judged by the directories that would hold it. Nothing
 * is checked where the platform has no uids (Windows).
 */
export function refuseUntrustedPath(target: TrustedPath): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const { place: start, exists } = existingPart(resolve(target.path));
  let place = start;
  let isTop = exists;
  for (;;) {
    const stats = statOf(place);
    // A place that cannot be looked at is left to the read that follows, whose error names it.
    if (stats === undefined) return;
    checkOne(target, place, stats, uid, isTop);
    const parent = dirname(place);
    if (parent === place) return;
    place = parent;
    isTop = false;
  }
}

function statOf(place: string): Stats | undefined {
  try {
    return statSync(place);
  } catch {
    return undefined;
  }
}

/** The path with its links followed, or (it does not exist) the nearest directory above it that does. */
function existingPart(path: string): { place: string; exists: boolean } {
  for (let place = path; ; place = dirname(place)) {
    try {
      return { place: realpathSync(place), exists: place === path };
    } catch {
      if (dirname(place) === place) return { place, exists: false };
    }
  }
}
