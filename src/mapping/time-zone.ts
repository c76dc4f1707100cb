// Local times in a named IANA time zone (the mapping file's `timezone`, docs/export-format.md "The mapping file"):
// the UTC offset a wall-clock time had there, from the platform's own time zone data (Intl), DST included. A local
// time the clocks skipped does not exist; one they went through twice is ambiguous unless the mapping file says which
// (`dst`). Never guessed. Pure.

export type DstChoice = 'earlier' | 'later';

export type Zoned = { value: string } | { problem: 'gap' } | { problem: 'twice'; readings: [string, string] };

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(zone, format);
  }
  return format;
}

/** Whether the platform knows the zone (`Europe/London`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    formatOf(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock time at instant `ms` in the zone, as milliseconds of the same digits read as UTC. */
function wallClock(zone: string, ms: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatOf(zone).formatToParts(ms))
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const whole = Math.abs(minutes);
  return `${sign}${String(Math.floor(whole / 60)).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}`;
}

const DAY = 24 * 60 * 60 * 1000;

/**
 * `2026-10-25T01:30:00` (a local time, seconds given) in `zone` -> the same digits with the offset they had there
 * (`+01:00`), or why there is none.
 */
export function zonedDatetime(local: string, zone: string, dst: DstChoice | undefined): Zoned {
  const wall = Date.parse(`${local}Z`);
  // The offsets in force a day either side cover any change of the clocks in between.
  const offsets = new Set([wallClock(zone, wall - DAY) - (wall - DAY), wallClock(zone, wall + DAY) - (wall + DAY)]);
  const readings = [...offsets]
    .filter((offset) => wallClock(zone, wall - offset) === wall)
    // Earlier instant first: the larger offset (the summer time before the clocks go back).
    .sort((a, b) => b - a)
    .map((offset) => `${local}${offsetText(Math.round(offset / 60_000))}`);
  const [first, second] = readings;
  if (first === undefined) return { problem: 'gap' };
  if (second === undefined) return { value: first };
  if (dst === undefined) return { problem: 'twice', readings: [first, second] };
  return { value: dst === 'earlier' ? first : second };
}
