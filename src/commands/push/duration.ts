// How long something took or will take, for people: `45s`, `3m07s`, `2h05m`, `3d04h`. Pure.
// Rounded at the unit shown first, then split, so that 59.6 s is `1m00s` and never `60s` or
// `1m60s`; a duration that cannot be known (NaN, Infinity, negative) has no text at all: the
// caller leaves the ETA out rather than print `NaNs`.

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const two = (n: number): string => String(n).padStart(2, '0');

/** `45s`, `3m07s`, `2h05m`, `3d04h`; undefined when `seconds` is not a finite number of at least 0. */
export function formatDuration(seconds: number): string | undefined {
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  const whole = Math.round(seconds);
  if (whole < MINUTE) return `${whole}s`;
  if (whole < HOUR) return `${Math.floor(whole / MINUTE)}m${two(whole % MINUTE)}s`;
  const minutes = Math.round(seconds / MINUTE);
  if (minutes < DAY / MINUTE) return `${Math.floor(minutes / 60)}h${two(minutes % 60)}m`;
  const hours = Math.round(seconds / HOUR);
  return `${Math.floor(hours / 24)}d${two(hours % 24)}h`;
}
