/**
 * Issue 51, deduplication in batch mode on PostgreSQL (real broker and database): a batch's keys are
 * claimed in one statement and recorded in one statement, not one per turn of deliveries — counted on
 * the client (every query `pg` sends on the store's table) while two full batches are consumed with
 * their messages arriving one by one, and acked as whole batch msgs.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';
import { DATABASE_URL } from '../helpers/private-stores';
import { watchStatements, type SentStatement } from '../helpers/pg-statements';

type Msg = Record<string, any>;

describe('retry consumer in batch mode with PostgreSQL deduplication (real broker and database)', function () {
  this.timeout(60_000);
  let broker: Broker;
  let names: Names;
  let table: string;
  let db: pg.Client;
  let watch: ReturnType<typeof watchStatements> | undefined;
  const statements = (): SentStatement[] => watch?.sent ?? [];

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('batch-dedupe');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
    table = `test_batch_dedupe_${randomBytes(4).toString('hex')}`;
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
  });

  afterEach(async () => {
    watch?.stop();
    watch = undefined;
    await helper.unload();
    await broker.cleanup();
    await db.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await db.end();
  });

  /** Statements that claim keys (a claim, or an exchange with claims: its keys in $2), and those that only record or release. */
  const claiming = (s: SentStatement): boolean => s.text.includes('FROM input') && ((s.values[1] as unknown[] | undefined)?.length ?? 0) > 0;
  const claims = (): number => statements().filter(claiming).length;
  const writesOnly = (): number => statements().filter((s) => /^\s*INSERT/.test(s.text) && !claiming(s)).length;

  it('claims each batch of 500 in one statement and records it in one, with its messages arriving one by one', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
      { id: 'store', type: 'retry-dedupe', kind: 'postgres', postgres: 'db', table, mode: 'declare' },
      consumerNode([['seen', 'ack']], { batch: true, batchSize: '500', batchWait: '60000', dedupe: 'store' }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    // Every statement on the store's table, whoever sends it (the package's pool included), from now on.
    watch = watchStatements((text) => text.includes(table), db);
    const ch = await broker.model.createConfirmChannel();
    for (let n = 0; n < 1000; n += 1) {
      ch.publish(names.mainExchange, names.routingKey, Buffer.from(JSON.stringify({ n })), { messageId: `m-${n}`, contentType: 'application/json' });
      // One by one: each delivery in its own turns of the consumer's event loop.
      if (n % 10 === 9) await ch.waitForConfirms();
    }
    await ch.waitForConfirms();
    await ch.close();
    await waitFor(() => sessionOf().stats.acked === 1000, 'the 1 000 acked');
    assert.deepEqual(
      seen.map((m) => m.amqp.items.length),
      [500, 500],
    );
    const done = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE state = 'done'`);
    assert.equal(Number(done.rows[0]?.n), 1000, 'every key recorded as processed');
    assert.equal(claims(), 2, `one claiming statement a batch (${statements().length} statements on the table)`);
    assert.ok(writesOnly() <= 2, `at most one recording statement a batch (got ${writesOnly()})`);
  });
});
