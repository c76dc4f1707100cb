import { writeSync } from 'node:fs';

// A test hook (test/e2e/lock-startup.test.ts): MIGRATE_TEST_STOP_AT=<point> makes `migrate push` stop dead at that
// moment of its start-up, say so on stderr, and wait there until it is killed, so that a test can SIGKILL it at
// every moment between taking the state directory's lock and its first request, then check that a rerun starts at
// once and ends exact. Without the variable it does nothing.

export const STOP_POINTS = [
  'state-dir-made',
  'lock-file-opened',
  'lock-taken',
  'lock-holder-written',
  'ledger-opened',
  'export-opened',
  'snapshot-taken',
  'run-started',
] as const;

export type StopPoint = (typeof STOP_POINTS)[number];

export const STOP_AT_ENV = 'MIGRATE_TEST_STOP_AT';

/** The hook for the point named in `MIGRATE_TEST_STOP_AT`: at it, the process blocks (synchronously) for good. */
export function stopPointsOf(wanted: string | undefined): (point: StopPoint) => void {
  if (wanted === undefined) return () => undefined;
  return (point) => {
    if (point !== wanted) return;
    writeSync(2, `migrate: MIGRATE_TEST_STOP_AT: stopped at ${point} (pid ${process.pid})\n`);
    // Nothing else runs from here on: no timer, no I/O, no signal handler; only a kill ends the process.
    for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  };
}
