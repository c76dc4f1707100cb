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
}

const ACCENT = '#2f6db5';
const FONT = 'font-family="system-ui, sans-serif" font-size="13"';

/** Escapes text for HTML and SVG (element content and quoted attributes). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const format = (n: number): string => n.toLocaleString('en-GB');

/** Horizontal bars, one per row, scaled to the largest value (a funnel, error codes). */
export function horizontalBars(title: string, bars: readonly Bar[], width = 720): string {
  const labelWidth = 200;
  const row = 26;
  const height = Math.max(1, bars.length) * row + 8;
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const room = width - labelWidth - 170;
  const body = bars
    .map((bar, index) => {
      const y = index * row + 4;
      const scale = bar.of === undefined ? max : Math.max(1, bar.of);
      const length = bar.value === 0 ? 0 : Math.max(2, Math.round((bar.value / scale) * room));
      const note = bar.note ? `  ${bar.note}` : '';
      return (
        `<text x="${labelWidth - 8}" y="${y + 17}" text-anchor="end">${escapeHtml(bar.label)}</text>` +
        `<rect x="${labelWidth}" y="${y + 3}" width="${length}" height="${row - 8}" rx="3" ` +
        `fill="${bar.color ?? ACCENT}"><title>${escapeHtml(`${bar.label}: ${format(bar.value)}`)}</title></rect>` +
        `<text x="${labelWidth + length + 6}" y="${y + 17}">${format(bar.value)}${escapeHtml(note)}</text>`
      );
    })
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeHtml(title)}" width="${width}" ` +
    `height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>${body}</svg>`
  );
}

/** Columns over time: one column per run, its height the accounts done in it, and the running total as a line. */
export function columnsOverTime(
  title: string,
  points: ReadonlyArray<{ label: string; value: number }>,
  width = 720,
): string {
  const height = 240;
  const left = 56;
  const bottom = 40;
  const top = 16;
  const plotHeight = height - bottom - top;
  const n = Math.max(1, points.length);
  // A few runs get narrow columns, not one slab across the chart.
  const step = Math.min(90, (width - left - 16) / n);
  let running = 0;
  const totals = points.map((point) => (running += point.value));
  const max = Math.max(1, running);
  const y = (value: number): number => top + plotHeight - (value / max) * plotHeight;
  const columns = points
    .map((point, index) => {
      const x = left + index * step + step * 0.15;
      const h = (point.value / max) * plotHeight;
      return (
        `<rect x="${x.toFixed(1)}" y="${(top + plotHeight - h).toFixed(1)}" width="${(step * 0.7).toFixed(1)}" ` +
        `height="${h.toFixed(1)}" ` +
        `fill="${ACCENT}"><title>${escapeHtml(`${point.label}: ${format(point.value)} done`)}</title></rect>` +
        `<text x="${(x + step * 0.35).toFixed(1)}" y="${height - bottom + 16}" text-anchor="middle" ` +
        `font-size="11">${escapeHtml(point.label)}</text>`
      );
    })
    .join('');
  const line = totals
    .map((total, index) => `${(left + index * step + step / 2).toFixed(1)},${y(total).toFixed(1)}`)
    .join(' ');
  const axis =
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - 8}" y2="${top + plotHeight}" stroke="#888"/>` +
    `<text x="${left - 6}" y="${top + 4}" text-anchor="end" font-size="11">${format(max)}</text>` +
    `<text x="${left - 6}" y="${top + plotHeight}" text-anchor="end" font-size="11">0</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeHtml(title)}" width="${width}" ` +
    `height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>` +
    `${axis}${columns}<polyline points="${line}" fill="none" stroke="#e07b00" stroke-width="2"/></svg>`
  );
}
