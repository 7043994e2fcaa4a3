/**
 * The PostgreSQL store's sweep of expired rows, owned by its store: the table range by range (see
 * sweep-ranges), from where the last sweep stopped, one sweep at a time.
 */
import type { Queryable } from '../postgres';
import { dedupeSweepStatement, pageTid, sweepPlan } from './sweep-ranges';

/** Pages a sweep statement covers (a TID range scan), and at most how many pages one sweep covers. */
export interface SweepOptions {
  rangePages?: number;
  maxPages?: number;
}
const SWEEP_RANGE_PAGES = 512;
const SWEEP_MAX_PAGES = 65_536;

export class TableSweep {
  /** The page the next sweep starts at. */
  private cursor = 0;
  /** The sweep running now, if one is. */
  private running: Promise<number> | undefined;
  private readonly statement: string;

  constructor(
    private readonly db: Queryable,
    private readonly table: string,
  ) {
    this.statement = dedupeSweepStatement(table);
  }

  /**
   * Deletes expired rows; how many went. A call while a sweep still runs (a slow one outlasting the
   * timer's period) joins it instead of walking the same pages a second time.
   */
  run(options: SweepOptions = {}): Promise<number> {
    this.running ??= this.walk(options).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Before PostgreSQL 14 a range is a scan of the whole table, so there one statement covers it all. */
  private async walk({ rangePages = SWEEP_RANGE_PAGES, maxPages = SWEEP_MAX_PAGES }: SweepOptions): Promise<number> {
    const size = await this.db.query<{ pages: string; ranged: boolean }>(
      `SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int AS pages, current_setting('server_version_num')::int >= 140000 AS ranged`,
      [this.table],
    );
    const pages = Number(size.rows[0]?.pages ?? 0);
    const ranged = size.rows[0]?.ranged !== false;
    const ranges = ranged ? sweepPlan(this.cursor, pages, rangePages, maxPages) : sweepPlan(0, pages, pages, pages);
    let deleted = 0;
    for (const range of ranges) {
      const result = await this.db.query(this.statement, [pageTid(range.from), pageTid(range.to)]);
      deleted += result.rowCount ?? 0;
      this.cursor = range.next;
    }
    return deleted;
  }
}
