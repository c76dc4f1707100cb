import { setImmediate as nextTurn } from 'node:timers/promises';

// A join whose records are all at hand (the scratch join's file, sorted scratch runs, batches the
// parsing thread sent ahead) only awaits settled promises, which never let the event loop turn:
// no timer, no signal handler (push stops on SIGINT between staging batches), no progress redraw
// would run until the export has been read. Both joins turn it every ENTRIES_PER_TURN entries.

const ENTRIES_PER_TURN = 256;

/** A counter of entries handed out: every ENTRIES_PER_TURN-th call returns a turn of the event loop to await. */
export function eventLoopTurns(): () => Promise<void> | undefined {
  let sinceTurn = 0;
  return () => {
    sinceTurn += 1;
    if (sinceTurn < ENTRIES_PER_TURN) return undefined;
    sinceTurn = 0;
    return nextTurn();
  };
}
