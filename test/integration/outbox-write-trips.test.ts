/**
 * outbox write's statements on the real PostgreSQL, counted on the client: one statement with no
 * event (a batch's multi-row INSERT, a row a message) is one round trip — its own transaction, no
 * BEGIN and COMMIT — and fails as before (named, nothing written); several statements are still one
 * transaction.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { StatementError, writeOutbox } from '../../src/lib/outbox/write';
import { parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';
import { DATABASE_URL } from '../helpers/private-stores';
import { watchStatements } from '../helpers/pg-statements';

describe('outbox write: round trips of its statements (real PostgreSQL)', () => {
  let watch: ReturnType<typeof watchStatements>;
  let db: PostgresDatabase;
  let rows: string;
  let sent: () => string[];
  const outbox = parseTableName('unused_outbox') as TableName;

  beforeEach(async () => {
    db = new PostgresDatabase({ connectionString: DATABASE_URL });
    rows = `test_write_trips_${randomBytes(4).toString('hex')}`;
    await db.query(`CREATE TABLE ${rows} (n int PRIMARY KEY CHECK (n >= 0))`);
    watch = watchStatements(() => true);
    sent = () => watch.sent.map((s) => s.text);
  });

  afterEach(async () => {
    watch.stop();
    await db.query(`DROP TABLE IF EXISTS ${rows}`);
    await db.close();
  });

  const count = async (): Promise<number> => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${rows}`)).rows[0]?.n);

  it('one statement without an event: one round trip, no BEGIN and COMMIT', async () => {
    const results = await writeOutbox(db, outbox, [{ sql: `INSERT INTO ${rows} (n) SELECT unnest($1::int[])`, params: [[1, 2, 3]] }], undefined);
    assert.deepEqual(sent(), [`INSERT INTO ${rows} (n) SELECT unnest($1::int[])`]);
    assert.deepEqual(results, [{ command: 'INSERT', rowCount: 3, rows: [] }]);
    assert.equal(await count(), 3);
  });

  it('one statement that fails: named, nothing written (it was its own transaction)', async () => {
    const failed = await writeOutbox(db, outbox, [{ sql: `INSERT INTO ${rows} (n) SELECT unnest($1::int[])`, params: [[1, -2, 3]] }], undefined).catch((err: unknown) => err);
    assert.ok(failed instanceof StatementError);
    assert.equal(failed.index, 0);
    assert.equal(failed.code, '23514');
    assert.match(failed.message, /^statement 1 of 1 failed \(INSERT INTO .*\): .*check constraint.*; nothing was written$/);
    assert.equal(await count(), 0);
  });

  it('several statements: one transaction, the first rolled back when the second fails', async () => {
    await writeOutbox(db, outbox, [{ sql: `INSERT INTO ${rows} (n) VALUES (1)` }, { sql: `INSERT INTO ${rows} (n) VALUES (2)` }], undefined);
    assert.deepEqual(sent(), ['BEGIN', `INSERT INTO ${rows} (n) VALUES (1)`, `INSERT INTO ${rows} (n) VALUES (2)`, 'COMMIT']);
    const failed = await writeOutbox(db, outbox, [{ sql: `INSERT INTO ${rows} (n) VALUES (3)` }, { sql: `INSERT INTO ${rows} (n) VALUES (-4)` }], undefined).catch((err: unknown) => err);
    assert.ok(failed instanceof StatementError);
    assert.equal(failed.index, 1);
    assert.equal(await count(), 2);
  });
});
