/**
 * The PostgreSQL store's sweep walks the table's pages range by range (no index on expires_at, so a
 * complete can be a HOT update): it deletes expired rows and keeps live ones, goes on where it
 * stopped and wraps to the first page, one sweep at a time; check mode takes a table with or without
 * an expires_at index.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dedupeTableDdl, PostgresDedupeStore } from '../../src/lib/dedupe/postgres-store';
import { dedupeSweepStatement } from '../../src/lib/dedupe/sweep-ranges';
import { parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';
import { DATABASE_URL } from '../helpers/private-stores';

describe('deduplication store: PostgreSQL sweep by page ranges (real service)', () => {
  const name = `test_sweep_${randomBytes(4).toString('hex')}`;
  const table = parseTableName(name) as TableName;
  const db = new PostgresDatabase({ connectionString: DATABASE_URL });
  const client = new pg.Client({ connectionString: DATABASE_URL });

  /** Expired rows on pages [0, 8), [8, 40) and from 40 on, and the live rows. */
  async function counts(): Promise<{ low: number; middle: number; high: number; live: number }> {
    const r = await client.query<Record<'low' | 'middle' | 'high' | 'live', string>>(
      `SELECT count(*) FILTER (WHERE expires_at < now() AND page < 8) AS low,
              count(*) FILTER (WHERE expires_at < now() AND page >= 8 AND page < 40) AS middle,
              count(*) FILTER (WHERE expires_at < now() AND page >= 40) AS high,
              count(*) FILTER (WHERE expires_at >= now()) AS live
         FROM (SELECT expires_at, (ctid::text::point)[0] AS page FROM ${table.sql}) t`,
    );
    const row = r.rows[0] as Record<'low' | 'middle' | 'high' | 'live', string>;
    return { low: Number(row.low), middle: Number(row.middle), high: Number(row.high), live: Number(row.live) };
  }

  before(async () => {
    await client.connect();
  });
  after(async () => {
    await client.query(`DROP TABLE IF EXISTS ${table.sql}`);
    await client.end();
    await db.close();
  });

  it('declare mode makes no index on expires_at; the sweep statement is a TID range scan', async () => {
    const store = new PostgresDedupeStore(db, { table, mode: 'declare', sweepMs: 0 });
    await store.prepare();
    await store.close();
    const indexes = await client.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE tablename = $1', [name]);
    assert.equal(indexes.rows.length, 1, JSON.stringify(indexes.rows));
    assert.match(indexes.rows[0]?.indexdef ?? '', /\(scope, key\)/);
    await client.query(`PREPARE sweep_plan(tid, tid) AS ${dedupeSweepStatement(table.sql)}`);
    try {
      const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE sweep_plan('(0,0)', '(8,0)')`);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      assert.match(text, new RegExp(`Tid Range Scan on ${name}`), text);
    } finally {
      await client.query('DEALLOCATE sweep_plan');
    }
  });

  it('deletes expired rows and keeps live ones, range after range, going on where it stopped and wrapping to page 0', async () => {
    const store = new PostgresDedupeStore(db, { table, mode: 'declare', sweepMs: 0 });
    await store.prepare();
    // Every other row expired, spread over every page.
    await client.query(
      `INSERT INTO ${table.sql} (scope, key, state, owner, expires_at)
       SELECT 's', 'k-' || g, 'done', NULL, now() + CASE WHEN g % 2 = 0 THEN interval '-1 hour' ELSE interval '1 hour' END
         FROM generate_series(1, 8000) g`,
    );
    const pages = Number((await client.query<{ n: string }>(`SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int AS n`, [table.sql])).rows[0]?.n);
    assert.ok(pages > 40, `the table spans more than 40 pages (${pages})`);
    const before = await counts();

    // The first sweep stops after 40 pages (5 ranges of 8): the rest is still there.
    const first = await store.sweep({ rangePages: 8, maxPages: 40 });
    const afterFirst = await counts();
    assert.deepEqual(afterFirst, { low: 0, middle: 0, high: before.high, live: before.live });
    assert.equal(first, before.low + before.middle);

    // Rows on the first pages expire again; the next sweep starts at page 40, reaches the end and
    // wraps to pages 0-7 (where its budget ends), leaving pages 8-39 for the one after.
    await client.query(`UPDATE ${table.sql} SET expires_at = now() - interval '1 hour' WHERE (ctid::text::point)[0] < 4`);
    const again = await counts();
    assert.ok(again.low > 0, 'expired rows on pages 0-7 again');
    const second = await store.sweep({ rangePages: 8, maxPages: pages - 40 + 8 });
    const afterSecond = await counts();
    assert.deepEqual(afterSecond, { low: 0, middle: again.middle, high: 0, live: again.live });
    assert.equal(second, again.low + again.high);
    const third = await store.sweep({ rangePages: 8 });
    assert.equal(third, again.middle);
    assert.deepEqual(await counts(), { low: 0, middle: 0, high: 0, live: again.live });
    assert.equal(await store.sweep({ rangePages: 8 }), 0, 'nothing left to sweep');
    await store.close();
  });

  it('a sweep called while one runs joins it: the rows are walked once, both callers get its count', async () => {
    const store = new PostgresDedupeStore(db, { table, mode: 'declare', sweepMs: 0 });
    await store.prepare();
    await client.query(
      `INSERT INTO ${table.sql} (scope, key, state, owner, expires_at)
       SELECT 's', 'j-' || g, 'done', NULL, now() - interval '1 hour' FROM generate_series(1, 3000) g`,
    );
    const now = await counts();
    const expired = now.low + now.middle + now.high;
    assert.ok(expired >= 3000, `expired rows to sweep (${expired})`);
    const [a, b] = await Promise.all([store.sweep({ rangePages: 4 }), store.sweep({ rangePages: 4 })]);
    assert.deepEqual([a, b], [expired, expired]);
    assert.equal(await store.sweep({ rangePages: 4 }), 0, 'a sweep after it runs on its own');
    await store.close();
  });

  it('check mode takes the table without an index on expires_at, and with one (made by an earlier version)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${table.sql}`);
    for (const ddl of dedupeTableDdl(table)) await client.query(ddl);
    const check = new PostgresDedupeStore(db, { table, mode: 'check', sweepMs: 0 });
    await check.prepare();
    await check.close();
    await client.query(`CREATE INDEX ${name}_expires ON ${table.sql} (expires_at)`);
    const again = new PostgresDedupeStore(db, { table, mode: 'check', sweepMs: 0 });
    await again.prepare();
    await again.claim([{ scope: 's', key: 'a' }], 'A', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await again.sweep(), 1, 'the sweep works with the index there too');
    await again.close();
  });
});
