/**
 * Where the PostgreSQL store's sweep looks for expired rows: the table in ranges of pages (a TID
 * range scan on PostgreSQL 14+), so no index on expires_at is needed and a complete, which changes
 * only expires_at, state and owner, can be a HOT update. Pure.
 */

/** Pages [from, to) of the table, and the page the next sweep starts at if this range is the last one done. */
export interface PageRange {
  from: number;
  to: number;
  next: number;
}

/**
 * One sweep's ranges: from `cursor`, `step` pages each, until the table (`pages` long) has been
 * covered once or `budget` pages are spent, wrapping to page 0 at the table's end. Each range says
 * where the next sweep starts once it is done, so a sweep that stops half-way goes on from there.
 */
export function sweepPlan(cursor: number, pages: number, step: number, budget: number): PageRange[] {
  const total = Math.max(0, Math.floor(pages));
  if (total === 0) return [];
  const size = Math.max(1, Math.floor(step));
  let at = cursor >= 0 && cursor < total ? Math.floor(cursor) : 0;
  let left = Math.min(total, Math.max(1, Math.floor(budget)));
  const ranges: PageRange[] = [];
  while (left > 0) {
    const to = Math.min(at + Math.min(size, left), total);
    const next = to === total ? 0 : to;
    ranges.push({ from: at, to, next });
    left -= to - at;
    at = next;
  }
  return ranges;
}

/** A page number as the first tuple id on it (`'(12,0)'`), for `ctid >= … AND ctid < …`. */
export function pageTid(page: number): string {
  return `(${page},0)`;
}

/** Deletes the expired rows on pages [$1, $2) given as tuple ids: a TID range scan, no index needed. */
export function dedupeSweepStatement(t: string): string {
  return `DELETE FROM ${t} WHERE ctid >= $1::tid AND ctid < $2::tid AND expires_at < now()`;
}
