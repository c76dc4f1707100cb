// The clock of schedules and durations (docs/limits.md "Clocks"): milliseconds since the epoch that never step. It
// reads the wall clock once, when the process starts, and adds the monotonic time since (performance.now), so an NTP
// step of the wall clock during a run neither stalls a poll due "in an hour" nor makes a run last -3,300 s or 7,209 s.
// Wall time (Date) is for what is shown or stored as a date only. Like errors.ts, a leaf every folder may import.

/**
 * Now, in whole epoch milliseconds that only move forward at the pace of time (whole, as Date.now() is: the ledgers
 * store the times computed from it in integer columns, PostgreSQL's bigint among them).
 */
export function monotonicNow(): number {
  return Math.floor(performance.timeOrigin + performance.now());
}
