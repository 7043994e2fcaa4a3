/**
 * The pipelined outbox relay on the real PostgreSQL and broker: with several batches in flight, a
 * key's next row is published only after its previous one was confirmed (and marked), and every row
 * is marked sent once, published once; with the relay's connection lost mid-pipeline, no row is lost
 * (each ends `sent`, a failed publish is published again, each event reaches the queue; a publish
 * whose confirm was lost with the connection may arrive twice, with the same messageId).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import { AMQP_URL, Broker, waitFor } from '../helpers/broker';
import { helper } from '../helpers/node-red';
import { DATABASE_URL } from '../helpers/private-stores';
import { OUTBOX_COLUMNS, OUTBOX_INDEXES, OutboxRelay, outboxTableDdl, type EventPublisher } from '../../src/lib/outbox';
import { checkTable, parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';
import { ConfirmPublisher } from '../../src/lib/publish';

describe('pipelined outbox relay (real PostgreSQL and broker)', function () {
  let broker: Broker;
  let db: PostgresDatabase;
  let table: TableName;
  let queue: string;

  beforeEach(async () => {
    broker = await Broker.open();
    db = new PostgresDatabase({ connectionString: DATABASE_URL });
    const tag = randomBytes(4).toString('hex');
    table = parseTableName(`test_outbox_pipe_${tag}`) as TableName;
    queue = `test-outbox-pipe-${tag}`;
    for (const sql of outboxTableDdl(table)) await db.query(sql);
    await (await broker.ch()).assertQueue(queue, { durable: false });
    broker.track('queue', queue);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
    await db.query(`DROP TABLE IF EXISTS ${table.sql}`);
    await db.close();
  });

  /** `count` rows for the queue (default exchange) in one transaction; row i has key `key(i)` (or none). */
  async function insertRows(count: number, key: (i: number) => string | null): Promise<void> {
    await db.query(
      `INSERT INTO ${table.sql} (id, exchange, routing_key, payload, order_key)
         SELECT 'r-' || g, '', $1, convert_to('{"i":' || g || '}', 'UTF8'), k
           FROM generate_series(0, $2 - 1) g, LATERAL (SELECT ($3::text[])[g + 1] AS k) keys`,
      [queue, count, Array.from({ length: count }, (_, i) => key(i))],
    );
  }

  async function drainQueue(): Promise<string[]> {
    const ch = await broker.ch();
    const ids: string[] = [];
    for (;;) {
      const m = await ch.get(queue, { noAck: true });
      if (!m) return ids;
      ids.push(String(m.properties.messageId));
    }
  }

  async function statusCounts(): Promise<Record<string, number>> {
    const rows = (await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${table.sql} GROUP BY status`)).rows;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  it("checks the index the claim walks: (seq) for pending rows, which the primary key on (seq) is not", async () => {
    assert.deepEqual(await checkTable(db, table, OUTBOX_COLUMNS, OUTBOX_INDEXES), [], 'as declared');
    await db.query(`DROP INDEX "${table.table}_claim"`);
    assert.deepEqual(await checkTable(db, table, OUTBOX_COLUMNS, OUTBOX_INDEXES), [`table ${table.sql} has no index on (seq) WHERE status = 'pending' (the claim walks it)`]);
    await db.query(`CREATE INDEX "${table.table}_claim" ON ${table.sql} (seq) WHERE status = 'sent'`);
    assert.equal((await checkTable(db, table, OUTBOX_COLUMNS, OUTBOX_INDEXES)).length, 1, 'another predicate is not it');
  });

  it('with several batches in flight, keeps per-key order (a key\'s next row waits for its previous confirm) and marks every row sent once', async () => {
    const count = 300;
    const batchSize = 10;
    // Every third row has one of 4 keys; the others none (those are claimed freely, so claims come back full).
    const keyOf = (i: number): string | null => (i % 3 === 0 ? `k${(i / 3) % 4}` : null);
    await insertRows(count, keyOf);
    const model = broker.model;
    const channel: ConfirmChannel = await model.createConfirmChannel();
    channel.on('error', () => undefined);
    const confirmed = new ConfirmPublisher(channel);
    // Confirms are held back until two batches' worth are outstanding (or all rows were published,
    // or 100 ms passed: only so that a short claim at the tail cannot hang): the relay must claim
    // and publish the next batch while the previous one waits.
    let outstanding = 0;
    let maxOutstanding = 0;
    let published = 0;
    let held: Array<() => void> = [];
    let fallback: NodeJS.Timeout | undefined;
    const release = (): void => {
      clearTimeout(fallback);
      fallback = undefined;
      const now = held;
      held = [];
      for (const go of now) go();
    };
    const lastConfirmedOfKey = new Map<string, number>();
    const violations: string[] = [];
    const publisher: EventPublisher = {
      publish: async (exchange, routingKey, content, options) => {
        const i = Number(String(options.messageId).slice(2));
        const key = keyOf(i);
        if (key !== null) {
          const previous = [...Array(i).keys()].filter((j) => keyOf(j) === key).pop();
          if (previous !== undefined && lastConfirmedOfKey.get(key) !== previous) violations.push(`r-${i} published before r-${previous} (${key}) was confirmed`);
        }
        published += 1;
        outstanding += 1;
        maxOutstanding = Math.max(maxOutstanding, outstanding);
        await confirmed.publish(exchange, routingKey, content, options);
        await new Promise<void>((resolve) => {
          held.push(resolve);
          if (held.length >= 2 * batchSize || published === count) release();
          else fallback ??= setTimeout(release, 100);
        });
        outstanding -= 1;
        if (key !== null) lastConfirmedOfKey.set(key, i);
      },
    };
    const relay = new OutboxRelay({ db, table, publisher, batchSize, inFlight: 3, ordered: true, pollMs: 100, retentionMs: 0 });
    try {
      relay.start();
      await waitFor(async () => (await statusCounts()).sent === count, `${count} rows sent`);
    } finally {
      await relay.stop();
      release();
      await channel.close().catch(() => undefined);
    }
    assert.ok(maxOutstanding > batchSize, `more than one batch in flight (at most ${maxOutstanding} publishes outstanding)`);
    assert.deepEqual(violations, []);
    const attempts = (await db.query<{ attempts: number; n: number }>(`SELECT attempts, count(*)::int AS n FROM ${table.sql} GROUP BY attempts`)).rows;
    assert.deepEqual(attempts, [{ attempts: 1, n: count }], 'every row published and marked once');
    assert.equal(relay.stats.sent, count);
    const ids = await drainQueue();
    assert.equal(ids.length, count, 'each event once on the queue');
    assert.equal(new Set(ids).size, count);
    for (const key of ['k0', 'k1', 'k2', 'k3']) {
      const order = ids.filter((id) => keyOf(Number(id.slice(2))) === key).map((id) => Number(id.slice(2)));
      assert.deepEqual(order, [...order].sort((a, b) => a - b), `${key} in the order written`);
    }
  });

  for (const path of ['publish', 'publishBatch'] as const) {
    it(`loses nothing when the relay's connection is lost mid-pipeline: the publishes it failed go out again (${path})`, async () => {
      const count = 2000;
      const batchSize = 20;
      await insertRows(count, () => null);
      // A publisher on a connection of its own that is cut (its socket destroyed, as a network failure
      // does) right after the 250th publish is written, with batches in flight; the next publish opens a new one.
      let model: ChannelModel | undefined;
      let current: Promise<ConfirmPublisher> | undefined;
      const open = async (): Promise<ConfirmPublisher> => {
        model = await amqp.connect(AMQP_URL);
        model.on('error', () => undefined);
        const channel = await model.createConfirmChannel();
        channel.on('error', () => undefined);
        return new ConfirmPublisher(channel);
      };
      let published = 0;
      const counted = (): void => {
        published += 1;
        if (published === 250) {
          (model?.connection as unknown as { stream: { destroy(err: Error): void } }).stream.destroy(new Error('network cut'));
          current = undefined;
        }
      };
      const publisher: EventPublisher = {
        publish: async (exchange, routingKey, content, options) => {
          let confirmed = await (current ??= open());
          if (confirmed.closed) confirmed = await (current = open());
          const done = confirmed.publish(exchange, routingKey, content, options);
          counted();
          await done;
        },
      };
      if (path === 'publishBatch') {
        // The relay's batch path: the cut comes in the middle of a batch's synchronous run.
        publisher.publishBatch = (n, message, settle) => {
          void (async () => {
            let confirmed = await (current ??= open());
            if (confirmed.closed) confirmed = await (current = open());
            // Counted as each is handed over: the cut comes before the 250th is written.
            confirmed.sendBatch(
              n,
              (i) => {
                counted();
                return message(i);
              },
              settle,
            );
          })();
        };
      }
      const relay = new OutboxRelay({ db, table, publisher, batchSize, inFlight: 3, pollMs: 100, retentionMs: 0, backoff: { initialMs: 50, maxMs: 200 } });
      const failed = new Set<string>();
      relay.on('failure', (f) => failed.add(f.id));
      try {
        relay.start();
        await waitFor(async () => (await statusCounts()).sent === count, `all ${count} rows sent`);
      } finally {
        await relay.stop();
        await model?.close().catch(() => undefined);
      }
      assert.ok(failed.size > 0, 'the cut failed publishes in flight');
      assert.deepEqual(await statusCounts(), { sent: count }, 'none failed, none left');
      const retried = (await db.query<{ id: string; attempts: number }>(`SELECT id, attempts FROM ${table.sql} WHERE id = ANY($1::text[])`, [[...failed]])).rows;
      assert.deepEqual(
        retried.filter((r) => r.attempts < 2),
        [],
        'a row whose publish failed with the connection was published again, not taken as sent',
      );
      const ids = await drainQueue();
      assert.equal(new Set(ids).size, count, `every event on the queue (${ids.length - new Set(ids).size} twice, with the same messageId)`);
    });
  }
});
