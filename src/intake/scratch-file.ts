import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A scratch file for data that may not fit in memory (spooled errors, sorted runs). It holds
// customers' data, so it is created 0600 and unlinked as soon as it is open: even a run killed
// with SIGKILL leaves nothing behind. Where the OS refuses (Windows), close() removes it.

export interface ScratchFile {
  readonly fd: number;
  close(): void;
}

export function openScratchFile(scratchDir: string | undefined, name: string): ScratchFile {
  const dir = mkdtempSync(path.join(scratchDir ?? os.tmpdir(), `migrate-${name}-`));
  const fd = openSync(path.join(dir, name), 'w+', 0o600);
  let leftDir: string | undefined;
  try {
    rmSync(dir, { recursive: true });
  } catch {
    leftDir = dir;
  }
  return {
    fd,
    close: () => {
      closeSync(fd);
      if (leftDir !== undefined) rmSync(leftDir, { recursive: true, force: true });
    },
  };
}
