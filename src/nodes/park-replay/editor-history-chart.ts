/**
 * The parking browser's small history charts: a consumer's minutes folded into a few buckets, drawn as
 * SVG bars (counts a minute) or a line (the parking depth). Pure, and free of the editor's globals
 * (unit-tested in Node.js); the SVG is a string the sidebar inserts.
 */

export type Fold = 'sum' | 'last';

/**
 * `values` (oldest first) in at most `n` buckets of equal minutes, the newest bucket ending with the
 * last value: a count's buckets add up (`sum`); a gauge's keep its last known value (`last`). A bucket
 * of nulls only stays null.
 */
export function fold(values: ReadonlyArray<number | null>, n: number, how: Fold): Array<number | null> {
  const count = Math.max(1, Math.min(Math.floor(n), values.length));
  const size = Math.ceil(values.length / count);
  const out: Array<number | null> = [];
  // Buckets end at the newest value: the oldest bucket may be the short one.
  for (let end = values.length; end > 0; end -= size) {
    const part = values.slice(Math.max(0, end - size), end).filter((v): v is number => v !== null);
    out.unshift(part.length === 0 ? null : how === 'sum' ? part.reduce((a, b) => a + b, 0) : (part[part.length - 1] ?? null));
  }
  return out;
}

export interface ChartOptions {
  width: number;
  height: number;
  /** A CSS colour. */
  color: string;
  /** The chart's tooltip and accessible name. */
  title: string;
}

const escapeXml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const num = (n: number): string => String(Math.round(n * 10) / 10);

function svg(body: string, o: ChartOptions): string {
  const title = escapeXml(o.title);
  return `<svg xmlns="http://www.w3.org/2000/svg" class="rmq-history-chart" width="${o.width}" height="${o.height}" viewBox="0 0 ${o.width} ${o.height}" role="img" aria-label="${title}"><title>${title}</title><line x1="0" y1="${o.height - 0.5}" x2="${o.width}" y2="${o.height - 0.5}" stroke="currentColor" stroke-opacity="0.25"/>${body}</svg>`;
}

/** One bar per value, scaled to the largest; a zero or unknown value draws no bar. */
export function barsSvg(values: ReadonlyArray<number | null>, o: ChartOptions): string {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  const step = o.width / Math.max(1, values.length);
  const gap = step > 3 ? 1 : 0;
  const bars = values
    .map((v, i) => {
      if (v === null || v <= 0 || max === 0) return '';
      const h = Math.max(1, (v / max) * (o.height - 1));
      return `<rect x="${num(i * step)}" y="${num(o.height - 1 - h)}" width="${num(step - gap)}" height="${num(h)}" fill="${o.color}"><title>${v}</title></rect>`;
    })
    .join('');
  return svg(bars, o);
}

/** A line through the known values, scaled to the largest (a flat line at the bottom when all are 0); unknown values break it. */
export function lineSvg(values: ReadonlyArray<number | null>, o: ChartOptions): string {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  const step = o.width / Math.max(1, values.length);
  const y = (v: number): number => o.height - 1 - (max === 0 ? 0 : (v / max) * (o.height - 2));
  const runs: string[][] = [[]];
  values.forEach((v, i) => {
    if (v === null) runs.push([]);
    else runs[runs.length - 1]?.push(`${num(i * step + step / 2)},${num(y(v))}`);
  });
  const lines = runs
    .filter((run) => run.length > 0)
    .map((run) => (run.length === 1 ? `<circle cx="${run[0]?.split(',')[0]}" cy="${run[0]?.split(',')[1]}" r="1.5" fill="${o.color}"/>` : `<polyline points="${run.join(' ')}" fill="none" stroke="${o.color}" stroke-width="1.5"/>`))
    .join('');
  return svg(lines, o);
}

/** A count's total over the minutes shown. */
export const total = (values: ReadonlyArray<number | null>): number => values.reduce<number>((a, b) => a + (b ?? 0), 0);

/** The last known value (a gauge's "now"), or null. */
export function lastKnown(values: ReadonlyArray<number | null>): number | null {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i] ?? null;
  return null;
}
