import { closeSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE, releasePrivate, removePrivate } from '../private-files.js';

// A scratch file for data that may not fit in memory (spooled errors, sorted runs). It holds
// customers' data, so it is created 0600 and unlinked as soon as it is open: even a run killed
// with SIGKILL leaves nothing behind. Where the OS refuses (Windows), close() removes it.

export interface ScratchFile {
  readonly fd: number;
  close(): void;
}

export function openScratchFile(scratchDir: string | undefined, name: string): ScratchFile {
  const dir = makePrivateDir(scratchDir ?? os.tmpdir(), name);
  const fd = openSync(path.join(dir, name), 'wx+', PRIVATE_FILE_MODE);
  let leftDir: string | undefined;
  try {
    rmSync(dir, { recursive: true });
    releasePrivate(dir);
  } catch {
    leftDir = dir;
  }
  return {
    fd,
    close: () => {
      closeSync(fd);
      if (leftDir !== undefined) removePrivate(leftDir);
    },
  };
}
