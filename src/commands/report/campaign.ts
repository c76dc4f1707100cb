// The campaign over time, for the HTML report: accounts done per hour, night or week, the pace
// and the finish it promises. Pure: given the ledger's hours and the report's time, the same
// answer. Times are UTC, as the ledger keeps them.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Buckets a chart shows at most before it groups them (hours into days, days into weeks). */
const MAX_BUCKETS = 60;
/** The pace is measured over this much of the campaign's end, at most. */
const PACE_WINDOW = 7 * DAY;

export interface TimeBucket {
  /** Unix ms of the bucket's start. */
  start: number;
  label: string;
  done: number;
}

export interface Timeline {
  unit: 'hour' | 'day' | 'week';
  /** Day and week buckets start at this UTC hour: the quietest of the campaign, so that a night is one bucket. */
  startHour: number;
  buckets: TimeBucket[];
}

export interface Pace {
  /** Accounts done per `unit` over the last `window` units. */
  perUnit: number;
  unit: 'hour' | 'day';
  window: number;
  /** Accounts left that a push can bring to done (not those needing action). */
  left: number;
  /** Unix ms at which the accounts left are done at this pace; undefined when the pace is 0. */
  finishAt: number | undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => String(n).padStart(2, '0');

/** `25 Nov`, or `25 Nov 14:00` for an hour. */
export function utcLabel(ms: number, withHour = false): string {
  const date = new Date(ms);
  const day = `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()] ?? ''}`;
  return withHour ? `${day} ${two(date.getUTCHours())}:00` : day;
}

const hourMs = (hour: string): number => Date.parse(`${hour}:00:00Z`);

/** The UTC hour of the day with the fewest accounts done (the earliest such hour): where a "day" is cut. */
export function quietestHour(hours: ReadonlyArray<{ hour: string; done: number }>): number {
  const perHour = new Array<number>(24).fill(0);
  for (const { hour, done } of hours) {
    const at = new Date(hourMs(hour)).getUTCHours();
    perHour[at] = (perHour[at] ?? 0) + done;
  }
  return perHour.indexOf(Math.min(...perHour));
}

/**
 * Accounts done per hour (a campaign of up to two days), per day cut at the quietest hour (a night
 * of cron runs stays one bucket), or per week when days would be too many to read; every bucket
 * from the campaign's start to `until`, empty ones too, so that a pause shows.
 */
export function timelineOf(
  hours: ReadonlyArray<{ hour: string; done: number }>,
  from: number,
  until: number,
): Timeline {
  const end = Math.max(until, from + 1);
  const startHour = quietestHour(hours);
  if (end - from <= 2 * DAY) return fill('hour', startHour, hours, Math.floor(from / HOUR) * HOUR, HOUR, end);
  const firstDay = Math.floor((from - startHour * HOUR) / DAY) * DAY + startHour * HOUR;
  const days = Math.ceil((end - firstDay) / DAY);
  return days <= MAX_BUCKETS
    ? fill('day', startHour, hours, firstDay, DAY, end)
    : fill('week', startHour, hours, firstDay, 7 * DAY, end);
}

function fill(
  unit: Timeline['unit'],
  startHour: number,
  hours: ReadonlyArray<{ hour: string; done: number }>,
  first: number,
  size: number,
  end: number,
): Timeline {
  const buckets: TimeBucket[] = [];
  for (let start = first; start < end; start += size)
    buckets.push({ start, label: unit === 'hour' ? utcLabel(start, true) : utcLabel(start), done: 0 });
  for (const { hour, done } of hours) {
    const index = Math.floor((hourMs(hour) - first) / size);
    const bucket = buckets[Math.min(Math.max(index, 0), buckets.length - 1)];
    if (bucket !== undefined) bucket.done += done;
  }
  return { unit, startHour, buckets };
}

/**
 * The pace over the campaign's last week (or all of it when younger): accounts a day, or an hour
 * while the campaign is younger than a day; and when the accounts left are done at that pace.
 */
export function paceOf(
  hours: ReadonlyArray<{ hour: string; done: number }>,
  campaign: { from: number; now: number; left: number },
): Pace | undefined {
  const span = campaign.now - campaign.from;
  if (span <= 0) return undefined;
  const window = Math.min(span, PACE_WINDOW);
  const since = campaign.now - window;
  // An hour counts when it ended inside the window (the hour the window starts in counts in part).
  let done = 0;
  for (const { hour, done: n } of hours) {
    const start = hourMs(hour);
    if (start + HOUR <= since) continue;
    done += start >= since ? n : (n * (start + HOUR - since)) / HOUR;
  }
  const unit = window >= DAY ? 'day' : 'hour';
  const unitMs = unit === 'day' ? DAY : HOUR;
  const perUnit = done / (window / unitMs);
  const finishAt = perUnit > 0 ? campaign.now + (campaign.left / perUnit) * unitMs : undefined;
  return { perUnit, unit, window: window / unitMs, left: campaign.left, finishAt };
}
