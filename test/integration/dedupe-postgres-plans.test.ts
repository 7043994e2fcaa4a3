/**
 * The PostgreSQL store's statements find their rows by the primary key, whatever the planner knew of
 * the table when it planned them. A pooled connection prepares a statement once and may keep one
 * generic plan; planned while the table is new and empty (as in a fresh deployment), a join that
 * scans the table costs nothing then and grows with every key later (measured: a claim batch of 15
 * keys went from 1.5 ms to 4.8 ms within 20 000 keys). So no statement may scan the table.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DedupeKey } from '../../src/lib/dedupe';
import { dedupeStatements } from '../../src/lib/dedupe/postgres-statements';
import { dedupeTableDdl, PostgresDedupeStore } from '../../src/lib/dedupe/postgres-store';
import { parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';
import { DATABASE_URL } from '../helpers/private-stores';

/** A literal for each parameter of a statement (EXECUTE takes no bound parameters). */
const args: Record<string, string> = {
  claim: `'s', ARRAY['k']::text[], 'o', 1000`,
  exchange: `'s', ARRAY['k']::text[], 'o', 1000, ARRAY['d']::text[], 1000`,
  exchangeReleasing: `'s', ARRAY['k']::text[], 'o', 1000, ARRAY['d']::text[], 1000, ARRAY['r']::text[]`,
  complete: `'s', ARRAY['k']::text[], 1000`,
  release: `'s', ARRAY['k']::text[], 'o'`,
};

describe('deduplication store: PostgreSQL statement plans (real service)', () => {
  const name = `test_plans_${randomBytes(4).toString('hex')}`;
  const table = parseTableName(name) as TableName;
  const client = new pg.Client({ connectionString: DATABASE_URL });

  before(async () => {
    await client.connect();
    for (const ddl of dedupeTableDdl(table)) await client.query(ddl);
    // The plan a pooled connection may keep for good: the generic one, made while the table is empty.
    await client.query('SET plan_cache_mode = force_generic_plan');
  });
  after(async () => {
    await client.query(`DROP TABLE IF EXISTS ${table.sql}`);
    await client.end();
  });

  for (const [kind, literal] of Object.entries(args)) {
    it(`${kind}: no scan of the whole table in the plan made while it is empty`, async () => {
      const statement = dedupeStatements(table.sql)[kind as keyof ReturnType<typeof dedupeStatements>];
      await client.query(`PREPARE plan_${kind} AS ${statement.text}`);
      try {
        const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE plan_${kind}(${literal})`);
        const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
        assert.doesNotMatch(text, new RegExp(`Seq Scan on ${name}`), text);
        assert.match(text, new RegExp(`${name}_pkey`), text);
      } finally {
        await client.query(`DEALLOCATE plan_${kind}`);
      }
    });
  }
});

/**
 * A prepared statement is planned anew on each call (a custom plan) until PostgreSQL finds its generic
 * plan no dearer than the custom ones. With the arrays' lengths visible to the planner, one-key calls
 * (a quiet queue) always looked cheaper planned anew, and every call paid its planning (measured: a
 * one-key exchange took 620 µs of server CPU planned anew, 360 µs with the generic plan).
 */
describe('deduplication store: PostgreSQL statements settle on one plan (real service)', () => {
  const name = `test_generic_${randomBytes(4).toString('hex')}`;
  const table = parseTableName(name) as TableName;
  const client = new pg.Client({ connectionString: DATABASE_URL });

  before(async () => {
    await client.connect();
    for (const ddl of dedupeTableDdl(table)) await client.query(ddl);
  });
  after(async () => {
    await client.query(`DROP TABLE IF EXISTS ${table.sql}`);
    await client.end();
  });

  for (const [kind, literal] of Object.entries(args)) {
    it(`${kind}: one-key calls use the generic plan after the first few`, async () => {
      const statement = dedupeStatements(table.sql)[kind as keyof ReturnType<typeof dedupeStatements>];
      await client.query(`PREPARE generic_${kind} AS ${statement.text}`);
      try {
        for (let i = 0; i < 8; i++) await client.query(`EXECUTE generic_${kind}(${literal})`);
        const counts = await client.query<{ generic: string; custom: string }>(
          'SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE name = $1',
          [`generic_${kind}`.toLowerCase()], // PREPARE folds the name to lower case
        );
        assert.deepEqual(counts.rows, [{ generic: '3', custom: '5' }]);
      } finally {
        await client.query(`DEALLOCATE generic_${kind}`);
      }
    });
  }
});

describe('deduplication store: PostgreSQL release as an upsert (real service)', () => {
  const name = `test_release_${randomBytes(4).toString('hex')}`;
  const db = new PostgresDatabase({ connectionString: DATABASE_URL });
  const store = new PostgresDedupeStore(db, { table: parseTableName(name) as TableName, mode: 'declare', sweepMs: 0 });
  const k = (key: string): DedupeKey => ({ scope: 'orders', key });

  before(() => store.prepare());
  after(async () => {
    await store.close();
    await db.query(`DROP TABLE IF EXISTS ${name}`);
    await db.close();
  });

  it('a key twice in one release, and a key never claimed: released once, each free to claim (by another owner too)', async () => {
    assert.deepEqual(await store.claim([k('a')], 'one', 60_000), [{ state: 'claimed' }]);
    await store.release([k('a'), k('b'), k('a')], 'one');
    assert.deepEqual(await store.exchange({ complete: [], retentionMs: 60_000, release: [k('c'), k('c')], claim: [k('a'), k('b')], owner: 'two', leaseMs: 60_000 }), [{ state: 'claimed' }, { state: 'claimed' }]);
  });

  it("another owner's claim and a done key stay as they are", async () => {
    await store.claim([k('x')], 'one', 60_000);
    await store.complete([k('y')], 60_000);
    await store.release([k('x'), k('y')], 'two');
    const [x, y] = await store.claim([k('x'), k('y')], 'two', 60_000);
    assert.equal(x?.state, 'held');
    assert.deepEqual(y, { state: 'done' });
  });
});
