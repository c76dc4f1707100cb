import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** Who this process is, as a lease's or a lock's holder: host, pid and a random part (pids repeat across pods). */
export function holderId(): string {
  return `${hostname()} pid ${process.pid} ${randomUUID().slice(0, 8)}`;
}

/** True when `holder` names a process of this host that no longer runs (taken over at once, as the lock file is). */
export function deadOnThisHost(holder: string): boolean {
  const match = /^(.*) pid (\d+) \S+$/.exec(holder);
  if (match === null || match[1] !== hostname()) return false;
  try {
    process.kill(Number(match[2]), 0);
    return false;
  } catch (error) {
    return (error as { code?: string }).code !== 'EPERM';
  }
}
