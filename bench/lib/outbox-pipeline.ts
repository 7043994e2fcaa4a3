/**
 * Bench scenarios of the pipelined outbox relay (issue 28): the relay's msg/s against raw amqplib
 * publishing the same events with confirms from one client, and commit → consumer latency at a
 * sustained rate written by several writers (each a pg client of its own, one event per transaction).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ChannelModel } from 'amqplib';
import { percentile, sleep, type RunResult } from './common';
import { loadFlow, unloadFlow, type FlowNode } from './nodered';
import { benchBroker, timed, timeoutFor, type Ctx } from './scenarios';
import { DATABASE_URL, fillOutbox, withDb } from './store-scenarios';

const tab = (): FlowNode => ({ id: 'flow', type: 'tab', label: 'bench' });

/** The properties the bench's outbox rows carry (fillOutbox), as the relay publishes them. */
const EVENT_PROPERTIES = { contentType: 'application/json', persistent: true };

/**
 * Raw amqplib, the way a careful client publishes with confirms: one confirm channel, `batch`
 * events published (mandatory, a messageId each, the rows' properties) then waitForConfirms, and so on.
 */
export async function rawPublishEvents({ model, queue, count, body, batch }: { model: ChannelModel; queue: string; count: number; body: Buffer; batch: number }): Promise<RunResult> {
  const ch = await model.createConfirmChannel();
  try {
    return await timed(count, async () => {
      for (let i = 0; i < count; ) {
        for (const end = Math.min(count, i + batch); i < end; i++) ch.publish('', queue, body, { ...EVENT_PROPERTIES, messageId: `e-${i + 1}`, mandatory: true });
        await ch.waitForConfirms();
      }
    });
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/**
 * The package's relay (running, idle) publishing `count` rows already in the table: from the NOTIFY
 * until every row is marked sent (the rows are written before the clock starts, unlike pkgRelay).
 * The end is watched from the broker's side (the queue's message count, asked every 10 ms on a channel
 * of the bench's own connection), and only once the queue holds every event is the table asked whether
 * a row is still pending (the last batches' marks): polling the table all along ran a query on the
 * relay's database every 10 ms, charged to the relay's side.
 */
export async function pkgRelayFromNotify(
  ctx: Ctx,
  { table, queue, count, body, deleteSent = false }: { table: string; queue: string; count: number; body: Buffer; deleteSent?: boolean },
): Promise<RunResult> {
  await loadFlow([
    tab(),
    benchBroker(ctx),
    { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
    { id: 'relay', type: 'outbox-relay', z: 'flow', broker: 'broker', postgres: 'db', table, mode: 'check', batchSize: '100', pollSeconds: '30', deleteSent, wires: [[]] },
  ]);
  const ch = await ctx.model.createChannel();
  try {
    await sleep(500); // connected, listening, idle
    return await withDb(async (c) => {
      // The rows without their NOTIFY: the relay, idle until its next poll in 30 s, does not see them yet.
      await fillOutbox(c, table, queue, count, body, false);
      return timed(count, async () => {
        await c.query('SELECT pg_notify($1, $2)', [`${table}_outbox`, '']);
        const deadline = Date.now() + timeoutFor(count);
        while ((await ch.checkQueue(queue)).messageCount < count) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for the relay to publish ${count} events`);
          await sleep(10);
        }
        await waitUntil(c, `SELECT NOT EXISTS (SELECT 1 FROM ${table} WHERE status = 'pending') AS done`, timeoutFor(count), `the relay to mark ${count} rows sent`);
      });
    });
  } finally {
    await ch.close().catch(() => undefined);
    await unloadFlow();
  }
}

async function waitUntil(c: pg.Client, sql: string, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await c.query<{ done: boolean }>(sql)).rows[0]?.done) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

export interface RateLatency {
  p50: number;
  p99: number;
  /** Events written (and arrived). */
  count: number;
  /** Events per second the writers achieved. */
  writtenPerSec: number;
}

/**
 * Commit → consumer at a sustained rate: `writers` pg clients each write `rate / writers` events a
 * second for `seconds`, one event per transaction (an INSERT, committed when it answers, then a NOTIFY
 * of its own: a NOTIFY inside the writing transaction serializes every notifying commit in
 * PostgreSQL, which held 10 writers to about 400 events/s on the 2-core benchmark machine), paced by
 * the clock and spread over the interval; the package's relay (NOTIFY path, default
 * batch and window) publishes them to a queue consumed here. Latency: from the COMMIT's answer to
 * the event's arrival (p50, p99 in ms).
 */
export async function outboxLatencyAtRate(ctx: Ctx, { model, table, queue, writers, rate, seconds, body }: { model: ChannelModel; table: string; queue: string; writers: number; rate: number; seconds: number; body: Buffer }): Promise<RateLatency> {
  const ch = await model.createChannel();
  await ch.assertQueue(queue, { durable: false, autoDelete: false });
  const committed = new Map<string, number>();
  const arrivedAt = new Map<string, number>();
  let allArrived: (() => void) | undefined;
  const perWriter = Math.round((rate / writers) * seconds);
  const total = perWriter * writers;
  await ch.consume(
    queue,
    (m) => {
      if (!m) return;
      arrivedAt.set(String(m.properties.messageId), performance.now());
      if (arrivedAt.size >= total) allArrived?.();
    },
    { noAck: true },
  );
  await loadFlow([tab(), benchBroker(ctx), { id: 'db', type: 'retry-postgres', url: DATABASE_URL }, { id: 'relay', type: 'outbox-relay', z: 'flow', broker: 'broker', postgres: 'db', table, mode: 'check', pollSeconds: '30', wires: [[]] }]);
  const clients = await Promise.all(
    Array.from({ length: writers }, async () => {
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      return c;
    }),
  );
  try {
    await sleep(500);
    const run = randomBytes(3).toString('hex');
    const intervalMs = 1000 / (rate / writers);
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (c, w) => {
        for (let i = 0; i < perWriter; i++) {
          const due = t0 + (i + w / writers) * intervalMs;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          const id = `${run}-${w}-${i}`;
          // The INSERT in a transaction of its own (committed when it answers), the NOTIFY after it (see above).
          await c.query(`INSERT INTO ${table} (id, exchange, routing_key, payload, properties) VALUES ($1, '', $2, $3, $4)`, [id, queue, body, EVENT_PROPERTIES]);
          committed.set(id, performance.now());
          await c.query('SELECT pg_notify($1, $2)', [`${table}_outbox`, '']);
        }
      }),
    );
    const writtenPerSec = total / ((performance.now() - t0) / 1000);
    if (arrivedAt.size < total) {
      await Promise.race([
        new Promise<void>((resolve) => {
          allArrived = resolve;
        }),
        sleep(30_000),
      ]);
    }
    if (arrivedAt.size < total) throw new Error(`outbox latency at ${rate}/s: ${arrivedAt.size} of ${total} events arrived`);
    const latencies = [...committed].map(([id, at]) => Math.max(0, (arrivedAt.get(id) ?? at) - at));
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), count: total, writtenPerSec };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await unloadFlow();
    await ch.deleteQueue(queue).catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
}
