/** The outbox write runs: the outbox write node against the same transaction by hand, and the latency from a write to its event at a consumer. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ChannelModel } from 'amqplib';
import { percentile, withTimeout, type RunResult } from './common';
import { benchBroker, timed, timeoutFor, type Ctx } from './scenarios';
import { benchHooks, getNode, loadFlow, unloadFlow, type FlowNode, type Msg } from './nodered';
import { DATABASE_URL, OUTBOX_DDL, withDb } from './store-scenarios';

const tab = (): FlowNode => ({ id: 'flow', type: 'tab', label: 'bench' });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` writes through the outbox write node (one INSERT + the event), `window` in flight. */
export async function pkgWrite({ table, business, count, window, payload }: { table: string; business: string; count: number; window: number; payload: unknown }): Promise<RunResult> {
  await loadFlow([
    tab(),
    { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
    { id: 'src', type: 'bench-source', z: 'flow', wires: [['write']] },
    { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table, mode: 'declare', event: true, exchange: 'amq.direct', routingKey: 'bench', wires: [['sink']] },
    { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] },
  ]);
  try {
    return await timed(count, () =>
      new Promise<void>((resolve, reject) => {
        let sent = 0;
        let done = 0;
        const timer = setTimeout(() => reject(new Error(`outbox write: ${done} of ${count}`)), timeoutFor(count));
        const source = getNode('src') as unknown as { emitMsg(msg: Msg): void };
        const next = (): void => {
          const i = sent++;
          source.emitMsg({ payload, statements: [{ sql: `INSERT INTO ${business} (id, amount) VALUES ($1, $2)`, params: [`w-${i}`, i] }] });
        };
        benchHooks.onSink = () => {
          done += 1;
          if (done === count) {
            clearTimeout(timer);
            resolve();
          } else if (sent < count) next();
        };
        for (let i = 0; i < Math.min(window, count); i++) next();
      }),
    );
  } finally {
    benchHooks.onSink = undefined;
    await unloadFlow();
  }
}

/** The same transaction by hand (BEGIN, INSERT row, INSERT event, NOTIFY, COMMIT) on a pool, `window` in flight. */
export async function rawWrite({ table, business, count, window, payload }: { table: string; business: string; count: number; window: number; payload: unknown }): Promise<RunResult> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
  try {
    return await timed(count, async () => {
      let next = 0;
      const one = async (i: number): Promise<void> => {
        const c = await pool.connect();
        try {
          await c.query('BEGIN');
          await c.query(`INSERT INTO ${business} (id, amount) VALUES ($1, $2)`, [`w-${i}`, i]);
          await c.query(`INSERT INTO ${table} (id, exchange, routing_key, payload, headers, properties) VALUES ($1, 'amq.direct', 'bench', $2, '{}', $3)`, [
            `raw-${i}-${randomBytes(4).toString('hex')}`,
            Buffer.from(JSON.stringify(payload)),
            JSON.stringify({ contentType: 'application/json', persistent: true }),
          ]);
          await c.query('SELECT pg_notify($1, $2)', [`${table}_outbox`, String(i)]);
          await c.query('COMMIT');
        } finally {
          c.release();
        }
      };
      await Promise.all(
        Array.from({ length: Math.min(window, count) }, async () => {
          while (next < count) await one(next++);
        }),
      );
    });
  } finally {
    await pool.end();
  }
}

/** Fresh business and outbox tables for the write runs. */
export async function prepareWrite(table: string, business: string): Promise<void> {
  await withDb(async (c) => {
    await c.query(`DROP TABLE IF EXISTS ${table}, ${business}`);
    await c.query(OUTBOX_DDL(table));
    await c.query(`CREATE TABLE ${business} (id text PRIMARY KEY, amount numeric NOT NULL)`);
  });
}

/**
 * From commit to the queue: `count` events written one at a time (a pause between them) through the
 * outbox write node, the relay woken by NOTIFY; the time from the write's answer to the event's
 * arrival at a consumer of the target queue, p50 and p99 (ms).
 */
export async function outboxLatency(ctx: Ctx, { model, table, business, queue, count }: { model: ChannelModel; table: string; business: string; queue: string; count: number }): Promise<{ p50: number; p99: number }> {
  const ch = await model.createChannel();
  await ch.assertQueue(queue, { durable: false, autoDelete: false });
  await ch.bindQueue(queue, 'amq.direct', queue);
  const committed = new Map<string, number>();
  const latencies: number[] = [];
  let arrived: (() => void) | undefined;
  await ch.consume(
    queue,
    (m) => {
      if (!m) return;
      const at = committed.get(String(m.properties.messageId));
      if (at !== undefined) latencies.push(performance.now() - at);
      arrived?.();
    },
    { noAck: true },
  );
  await loadFlow([
    tab(),
    benchBroker(ctx),
    { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
    { id: 'src', type: 'bench-source', z: 'flow', wires: [['write']] },
    { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table, mode: 'declare', event: true, exchange: 'amq.direct', routingKey: queue, wires: [['sink']] },
    { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] },
    // A long poll: what is measured is the NOTIFY path.
    { id: 'relay', type: 'outbox-relay', z: 'flow', broker: 'broker', postgres: 'db', table, mode: 'declare', pollSeconds: '30', wires: [[]] },
  ]);
  try {
    await sleep(500);
    const source = getNode('src') as unknown as { emitMsg(msg: Msg): void };
    for (let i = 0; i < count; i++) {
      const got = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const written = new Promise<Msg>((resolve) => {
        benchHooks.onSink = (msg) => resolve(msg);
      });
      source.emitMsg({ payload: { i }, statements: [{ sql: `INSERT INTO ${business} (id, amount) VALUES ($1, $2)`, params: [`l-${i}`, i] }] });
      const msg = await written;
      committed.set((msg.outbox as { id: string }).id, performance.now());
      await withTimeout(got, 10_000, `event ${i} on ${queue}`);
      await sleep(5);
    }
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    benchHooks.onSink = undefined;
    await unloadFlow();
    await ch.deleteQueue(queue).catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
}
