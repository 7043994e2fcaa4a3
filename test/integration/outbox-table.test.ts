/**
 * The outbox table's problems on the real PostgreSQL: declare mode on a table that exists without some
 * columns names every one and changes nothing; the relay and the write try again by themselves and
 * work once the columns are added, without a redeploy; a database that refuses the login shows the
 * database's status, not the table's.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { waitFor } from '../helpers/broker';
import { brokerNode, tab } from '../helpers/flows';
import { errorsOf, helper, lastStatus, loadFlow, logLines } from '../helpers/node-red';
import { DATABASE_URL } from '../helpers/private-stores';
import { OUTBOX_COLUMNS, OUTBOX_INDEXES, outboxTableDdl } from '../../src/lib/outbox';
import { declareOrCheckTable, parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';

/** The outbox table without order_key and last_error, as a user might have made it by hand. */
function lackingTwoColumns(table: TableName): string {
  return `CREATE TABLE ${table.sql} (
  seq bigserial PRIMARY KEY, id text NOT NULL UNIQUE, exchange text NOT NULL, routing_key text NOT NULL,
  payload bytea NOT NULL, headers jsonb NOT NULL DEFAULT '{}', properties jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'pending', attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz)`;
}

describe('outbox table problems (real PostgreSQL)', function () {
  let db: PostgresDatabase;
  let table: TableName;

  beforeEach(() => {
    db = new PostgresDatabase({ connectionString: DATABASE_URL });
    table = parseTableName(`test_outbox_tbl_${randomBytes(4).toString('hex')}`) as TableName;
  });

  afterEach(async () => {
    await helper.unload();
    await db.query(`DROP TABLE IF EXISTS ${table.sql}`);
    await db.close();
  });

  async function indexNames(): Promise<string[]> {
    return (await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`, [table.table])).rows.map((r) => r.indexname);
  }

  it('declare mode on a table lacking two columns names both (and the index on one) and creates nothing', async () => {
    await db.query(lackingTwoColumns(table));
    const before = await indexNames();
    const problems = await declareOrCheckTable(db, table, 'declare', outboxTableDdl(table), OUTBOX_COLUMNS, OUTBOX_INDEXES);
    assert.deepEqual(problems, await declareOrCheckTable(db, table, 'check', outboxTableDdl(table), OUTBOX_COLUMNS, OUTBOX_INDEXES), 'as check mode says it');
    assert.ok(problems.includes(`table ${table.sql} has no column order_key (text)`), problems.join('; '));
    assert.ok(problems.includes(`table ${table.sql} has no column last_error (text)`), problems.join('; '));
    assert.ok(problems.includes(`table ${table.sql} has no index on (order_key, seq) for pending rows`), problems.join('; '));
    assert.deepEqual(await indexNames(), before, 'no index created');
  });

  it('declare mode still creates a missing table and its indexes', async () => {
    assert.deepEqual(await declareOrCheckTable(db, table, 'declare', outboxTableDdl(table), OUTBOX_COLUMNS, OUTBOX_INDEXES), []);
    assert.deepEqual(await indexNames(), [`${table.table}_claim`, `${table.table}_id_key`, `${table.table}_order`, `${table.table}_pkey`, `${table.table}_sent`]);
  });

  describe('in the Node-RED runtime', function () {
    function flow(url: string): Array<Record<string, unknown>> {
      return [
        tab(),
        brokerNode(),
        { id: 'db', type: 'retry-postgres', url },
        { id: 'relay', type: 'outbox-relay', z: 'flow', broker: 'broker', postgres: 'db', table: table.table, mode: 'declare', pollSeconds: '0.2', wires: [[]] },
        { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table: table.table, mode: 'declare', event: true, exchange: 'amq.direct', routingKey: 'x', wires: [[]] },
      ];
    }

    it('the relay and the write recover without a redeploy once the missing columns are added, logging the problem once', async () => {
      await db.query(lackingTwoColumns(table));
      await loadFlow(flow(DATABASE_URL));
      await waitFor(() => /outbox-relay\.status\.table$/.test(lastStatus('relay')?.text ?? ''), 'the relay showing its table not usable');
      await waitFor(() => /outbox-write\.status\.table$/.test(lastStatus('write')?.text ?? ''), 'the write showing its table not usable');
      const problem = errorsOf('relay');
      assert.equal(problem.length, 1);
      assert.match(problem[0]!, /no column order_key \(text\); .*no column last_error \(text\)/);
      await db.query(`ALTER TABLE ${table.sql} ADD COLUMN order_key text, ADD COLUMN last_error text`);
      await waitFor(() => lastStatus('relay')?.fill === 'green', 'the relay relaying', 40_000);
      await waitFor(() => lastStatus('write')?.fill === 'green', 'the write usable', 40_000);
      assert.ok(logLines().some((l) => l === `outbox table ${table.table} is usable now`), 'said so');
      assert.equal(errorsOf('relay').length, 1, 'the problem logged once, not once per try');
      assert.equal(errorsOf('write').length, 1, 'the problem logged once, not once per try');
    });

    it('a database that refuses the login shows the database status, not the table one', async () => {
      // A role that does not exist: even a server that trusts every local login refuses it.
      const refused = new URL(DATABASE_URL);
      refused.username = `nosuch_${table.table}`;
      refused.password = '';
      await loadFlow(flow(refused.toString()));
      await waitFor(() => /retry-postgres\.status\.auth$/.test(lastStatus('relay')?.text ?? ''), 'the relay showing the refused login');
      await waitFor(() => /retry-postgres\.status\.auth$/.test(lastStatus('write')?.text ?? ''), 'the write showing the refused login');
      assert.deepEqual(errorsOf('relay'), [], 'the database is the retry-postgres node\'s to log');
      assert.deepEqual(errorsOf('write'), []);
    });
  });
});
