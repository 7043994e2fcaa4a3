/**
 * Batch msgs (issue 51) reaching the package's nodes that read one consumed message's `msg.amqp`:
 * outbox write's *Processed key* records every item's deduplication key the flow leaves to be acked,
 * in the write's transaction (and refuses a batch whose msg.outcomes cannot be read, writing nothing);
 * retry-publish refuses to reply to a batch or keep its ids (each item has its own). Batch msgs built
 * by hand, as the consumer builds them.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { waitFor } from '../helpers/broker';
import { brokerNode, tab } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';
import { DATABASE_URL } from '../helpers/private-stores';
import { dedupeTableDdl } from '../../src/lib/dedupe';
import { parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';

type Msg = Record<string, any>;

/** A batch msg of `size` items of queue `queue`, item n with deduplication key `k<n>`. */
function batchMsg(queue: string, size: number, extra: Msg = {}): Msg {
  const items = Array.from({ length: size }, (_, n) => ({
    deliveryId: `d${n}`,
    config: 'config',
    queue,
    exchange: 'x',
    routingKey: 'rk',
    redelivered: false,
    deliveryTag: n + 1,
    consumerTag: 'ctag',
    properties: { messageId: `m${n}`, replyTo: `reply-${n}` },
    headers: {},
    dedupe: { scope: queue, key: `k${n}` },
    retry: { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] },
  }));
  return { payload: items.map((_, n) => ({ n })), amqp: { config: 'config', queue, batch: { id: 'b1', size, split: 0 }, items }, ...extra };
}

describe('batch msgs at the nodes that read one consumed message (real database and broker)', function () {
  let tag: string;
  let db: PostgresDatabase;

  beforeEach(() => {
    tag = randomBytes(4).toString('hex');
    db = new PostgresDatabase({ connectionString: DATABASE_URL });
  });

  afterEach(async () => {
    await helper.unload();
    await db.query(`DROP TABLE IF EXISTS test_batch_rows_${tag}, test_batch_outbox_${tag}, test_batch_dedupe_${tag}`).catch(() => undefined);
    await db.close();
  });

  describe('outbox write with its Processed key', () => {
    async function load(): Promise<{ written: Msg[]; caught: Msg[] }> {
      await db.query(`CREATE TABLE test_batch_rows_${tag} (n int PRIMARY KEY)`);
      // The store's table, as a consumer using the store declares it.
      const table = parseTableName(`test_batch_dedupe_${tag}`) as TableName;
      for (const ddl of dedupeTableDdl(table)) await db.query(ddl);
      await loadFlow([
        tab(),
        { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
        { id: 'store', type: 'retry-dedupe', kind: 'postgres', postgres: 'db', table: `test_batch_dedupe_${tag}`, mode: 'declare' },
        { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table: `test_batch_outbox_${tag}`, mode: 'declare', event: false, dedupe: 'store', wires: [['written']] },
        { id: 'written', type: 'helper', z: 'flow' },
        { id: 'catch', type: 'catch', z: 'flow', scope: ['write'], wires: [['caught']] },
        { id: 'caught', type: 'helper', z: 'flow' },
      ]);
      const written: Msg[] = [];
      const caught: Msg[] = [];
      helper.getNode('written').on('input', (m: Msg) => written.push(m));
      helper.getNode('caught').on('input', (m: Msg) => caught.push(m));
      return { written, caught };
    }

    const insert = (ns: number[]): Msg[] => [{ sql: `INSERT INTO test_batch_rows_${tag} (n) SELECT unnest($1::int[])`, params: [ns] }];
    const done = async (): Promise<string[]> =>
      (await db.query<{ key: string }>(`SELECT key FROM test_batch_dedupe_${tag} WHERE state = 'done' ORDER BY key`)).rows.map((r) => r.key);

    it('records every item\'s key in the write\'s transaction, but not the keys of items msg.outcomes / msg.errors send elsewhere', async () => {
      const { written, caught } = await load();
      const queue = `q-${tag}`;
      helper.getNode('write').receive(batchMsg(queue, 5, { statements: insert([0, 2, 4]), outcomes: { 1: 'park' }, errors: { 3: 'duplicate key' } }));
      await waitFor(() => written.length + caught.length === 1, 'the write answered');
      assert.deepEqual(caught.map((m) => m.error.message), []);
      assert.deepEqual(await done(), ['k0', 'k2', 'k4']);
      const rows = await db.query<{ n: number }>(`SELECT n FROM test_batch_rows_${tag} ORDER BY n`);
      assert.deepEqual(rows.rows.map((r) => r.n), [0, 2, 4]);
    });

    it('a batch whose msg.outcomes names an item it does not have: an error naming the index, nothing written', async () => {
      const { written, caught } = await load();
      helper.getNode('write').receive(batchMsg(`q-${tag}`, 3, { statements: insert([0, 1, 2]), outcomes: { 3: 'park' } }));
      await waitFor(() => written.length + caught.length === 1, 'the write answered');
      assert.match(String(caught[0]?.error.message), /msg\.outcomes\[3\]: out of range.*nothing written/);
      assert.equal((await db.query(`SELECT n FROM test_batch_rows_${tag}`)).rows.length, 0);
      assert.deepEqual(await done(), []);
    });
  });

  describe('retry-publish', () => {
    async function caughtFrom(settings: Msg, msg: Msg): Promise<string> {
      await loadFlow([
        tab(),
        brokerNode(),
        { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', exchange: '', routingKey: `unused-${tag}`, persistent: true, ...settings, wires: [[]] },
        { id: 'catch', type: 'catch', z: 'flow', scope: ['pub'], wires: [['caught']] },
        { id: 'caught', type: 'helper', z: 'flow' },
      ]);
      const caught: Msg[] = [];
      helper.getNode('caught').on('input', (m: Msg) => caught.push(m));
      helper.getNode('pub').receive(msg);
      await waitFor(() => caught.length === 1, 'an error');
      return String(caught[0]?.error.message);
    }

    it('in reply mode, a batch msg: "this msg is a batch of N items", not a missing replyTo', async () => {
      const error = await caughtFrom({ mode: 'reply' }, batchMsg(`q-${tag}`, 3));
      assert.match(error, /^Error: reply: this msg is a batch of 3 items, each with its own replyTo/);
    });

    it('keeping the consumed ids, a batch msg: "this msg is a batch of N items"', async () => {
      const error = await caughtFrom({ mode: 'publish', keepIds: true }, batchMsg(`q-${tag}`, 2));
      assert.match(error, /^Error: keep the consumed ids: this msg is a batch of 2 items/);
    });
  });
});
