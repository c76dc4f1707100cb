// Charts of the HTML report, drawn as SVG text on the server: nothing is computed in a browser,
// and the page opens from a file share with no script and no network. Pure.

export interface Bar {
  label: string;
  value: number;
  /** A CSS colour; the default is the report's accent. */
  color?: string;
  /** Text after the value, e.g. a sample file:line. */
  note?: string;
  /** Scale the bar against this total (a share) instead of the chart's largest value. */
  of?: number;
  /** Failures drawn as a red segment after the bar (records the service refused), said in the text after it. */
  failed?: number;
}

const FAILED = '#c0392b';
/** Text width at font size 13, generously (system-ui averages about 7.2 px a character): so that no text clips. */
const textWidth = (text: string): number => Math.ceil(text.length * 7.8) + 8;

const ACCENT = '#2f6db5';
const FONT = 'font-family="system-ui, sans-serif" font-size="13"';

/** Escapes text for HTML and SVG (element content and quoted attributes). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const format = (n: number): string => n.toLocaleString('en-GB');

/** What a bar says after it: its value, failures, and its note. */
function barText(bar: Bar): string {
  const failed = bar.failed ? `, ${format(bar.failed)} failed` : '';
  return `${format(bar.value)}${failed}${bar.note ? `  ${bar.note}` : ''}`;
}

/**
 * Horizontal bars, one per row, scaled to the largest value (a funnel, error codes). The labels' column and the room
 * after the bars are as wide as their longest text, and the chart as wide as that needs: no text is ever clipped.
 */
export function horizontalBars(title: string, bars: readonly Bar[], width = 720): string {
  const labelWidth = Math.max(120, ...bars.map((bar) => textWidth(bar.label)));
  const textRoom = Math.max(80, ...bars.map((bar) => textWidth(barText(bar))));
  const room = Math.max(200, width - labelWidth - textRoom);
  const chartWidth = labelWidth + room + textRoom;
  const row = 26;
  const height = Math.max(1, bars.length) * row + 8;
  const max = Math.max(1, ...bars.map((bar) => bar.value + (bar.failed ?? 0)));
  const length = (value: number, scale: number): number =>
    value === 0 ? 0 : Math.max(2, Math.round((value / scale) * room));
  const body = bars
    .map((bar, index) => {
      const y = index * row + 4;
      const scale = bar.of === undefined ? max : Math.max(1, bar.of);
      const done = length(bar.value, scale);
      const failed = length(bar.failed ?? 0, scale);
      const failedRect =
        failed === 0
          ? ''
          : `<rect class="failed" x="${labelWidth + done}" y="${y + 3}" width="${failed}" height="${row - 8}" ` +
            `fill="${FAILED}"><title>${escapeHtml(`${bar.label}: ${format(bar.failed ?? 0)} failed`)}</title></rect>`;
      return (
        `<text x="${labelWidth - 8}" y="${y + 17}" text-anchor="end">${escapeHtml(bar.label)}</text>` +
        `<rect x="${labelWidth}" y="${y + 3}" width="${done}" height="${row - 8}" rx="3" ` +
        `fill="${bar.color ?? ACCENT}"><title>${escapeHtml(`${bar.label}: ${format(bar.value)}`)}</title></rect>` +
        failedRect +
        `<text x="${labelWidth + done + failed + 6}" y="${y + 17}">${escapeHtml(barText(bar))}</text>`
      );
    })
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeHtml(title)}" width="${chartWidth}" ` +
    `height="${height}" viewBox="0 0 ${chartWidth} ${height}" ${FONT}>${body}</svg>`
  );
}

export interface Column {
  label: string;
  value: number;
  /** The tooltip; `label: value` by default. */
  tip?: string;
}

/** Width of a label of `text` at font size 11, generously (system-ui averages about 6 px a character). */
const labelWidth = (text: string): number => text.length * 6.6 + 12;

/**
 * Which x labels to draw: every k-th column, k the least that keeps each label clear of the next
 * (labels are centred under their column, `step` apart). Always the first one.
 */
export function labelEvery(labels: readonly string[], step: number): number {
  const widest = Math.max(0, ...labels.map(labelWidth));
  return Math.max(1, Math.ceil(widest / Math.max(step, 0.001)));
}

/**
 * Columns over time: one column per bucket (its height the accounts done in it, on the left axis)
 * and the running total as a line on the right axis (a share of `total`, or of the sum). Columns
 * stay at most 90 px apart (one run is a column, not a slab) and at least 1 px wide; x labels are
 * thinned so that none overlaps the next.
 */
export function columnsOverTime(
  title: string,
  columns: readonly Column[],
  options: { total?: number; width?: number } = {},
): string {
  const width = options.width ?? 720;
  const [height, left, right, bottom, top] = [250, 56, 52, 40, 16];
  const plotHeight = height - bottom - top;
  const step = Math.min(90, (width - left - right) / Math.max(1, columns.length));
  const maxColumn = Math.max(1, ...columns.map((column) => column.value));
  let running = 0;
  const totals = columns.map((column) => (running += column.value));
  const lineMax = Math.max(1, options.total ?? running);
  const yOf = (share: number): number => top + plotHeight - share * plotHeight;
  const every = labelEvery(
    columns.map((column) => column.label),
    step,
  );
  const body = columns
    .map((column, index) => {
      const center = left + index * step + step / 2;
      const w = Math.max(1, step * 0.7);
      const h = (column.value / maxColumn) * plotHeight;
      const label =
        index % every === 0
          ? `<text class="x-label" x="${center.toFixed(1)}" y="${height - bottom + 16}" text-anchor="middle" ` +
            `font-size="11">${escapeHtml(column.label)}</text>`
          : '';
      return (
        `<rect x="${(center - w / 2).toFixed(1)}" y="${yOf(column.value / maxColumn).toFixed(1)}" ` +
        `width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="${ACCENT}">` +
        `<title>${escapeHtml(column.tip ?? `${column.label}: ${format(column.value)}`)}</title></rect>${label}`
      );
    })
    .join('');
  const line = totals
    .map((total, index) => `${(left + index * step + step / 2).toFixed(1)},${yOf(total / lineMax).toFixed(1)}`)
    .join(' ');
  // The line's last point is marked: with one column the line is that point alone.
  const last = line.split(' ').at(-1)?.split(',') ?? [];
  const end =
    last.length === 2
      ? `<circle cx="${last[0]}" cy="${last[1]}" r="3.5" fill="#e07b00"><title>${escapeHtml(
          `all so far: ${format(running)}`,
        )}</title></circle>`
      : '';
  const axisText = (x: number, y: number, anchor: string, text: string, cls: string): string =>
    `<text class="${cls}" x="${x}" y="${y}" text-anchor="${anchor}" font-size="11">${escapeHtml(text)}</text>`;
  const axes =
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - right}" y2="${top + plotHeight}" stroke="#888"/>` +
    axisText(left - 6, top + 4, 'end', format(maxColumn), 'y-label') +
    axisText(left - 6, top + plotHeight, 'end', '0', 'y-label') +
    axisText(width - right + 6, top + 4, 'start', options.total === undefined ? format(lineMax) : '100%', 'y-label') +
    axisText(width - right + 6, top + plotHeight, 'start', options.total === undefined ? '0' : '0%', 'y-label');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeHtml(title)}" width="${width}" ` +
    `height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>` +
    `${axes}${body}<polyline points="${line}" fill="none" stroke="#e07b00" stroke-width="2"/>${end}</svg>`
  );
}
