/**
 * Bench scenarios of the idempotent consumer and the transactional outbox, against the real services
 * (PostgreSQL at DATABASE_URL, Redis at REDIS_URL): what deduplication costs a consumer per store, how
 * fast the relay publishes against a hand-written relay (raw pg + amqplib confirms), how long an event
 * takes from commit to the queue, and what the write node costs against the same transaction by hand.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ChannelModel } from 'amqplib';
import { type RunResult } from './common';
import { benchBroker, benchConfig, benchConsumer, settleNode, timed, timeoutFor, type Ctx } from './scenarios';
import { armProbe, probeCounts, probeResult, withTimeout } from './common';
import { loadFlow, unloadFlow, type FlowNode } from './nodered';
import type { Names } from '../../test/helpers/flows';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const tab = (): FlowNode => ({ id: 'flow', type: 'tab', label: 'bench' });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export type StoreKind = 'none' | 'memory' | 'redis' | 'postgres';

/** The store nodes of a kind, with names of their own (a Redis prefix, a table) for one run. */
function storeNodes(kind: StoreKind, tag: string): FlowNode[] {
  if (kind === 'memory') return [{ id: 'store', type: 'retry-dedupe', kind: 'memory' }];
  if (kind === 'redis') return [{ id: 'store', type: 'retry-dedupe', kind: 'redis', url: REDIS_URL, prefix: `bench-${tag}:` }];
  if (kind === 'postgres') {
    return [
      { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
      { id: 'store', type: 'retry-dedupe', kind: 'postgres', postgres: 'db', table: `bench_dedupe_${tag}`, mode: 'declare' },
    ];
  }
  return [];
}

/**
 * Consume + ack through the package with deduplication in a store (or none), every message a new key;
 * `more`: more properties of the consumer (batch mode).
 */
export async function dedupeConsume(
  ctx: Ctx,
  { topo, count, prefetch, kind, more = {} }: { topo: Names; count: number; prefetch: number; kind: StoreKind; more?: Record<string, unknown> },
): Promise<RunResult> {
  const tag = randomBytes(4).toString('hex');
  const done = armProbe(count);
  const consumer = kind === 'none' ? more : { ...more, dedupe: 'store' };
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo), ...storeNodes(kind, tag), benchConsumer([['ack']], prefetch, consumer), settleNode('ack', 'ack')]);
  try {
    await withTimeout(done, timeoutFor(count), `package consumer with ${kind} deduplication: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await unloadFlow();
    await cleanStore(kind, tag);
  }
}

/** Removes a run's store: its table, or its Redis keys (`bench-<tag>:`). */
export async function cleanStore(kind: StoreKind, tag: string): Promise<void> {
  if (kind === 'postgres') await withDb((c) => c.query(`DROP TABLE IF EXISTS bench_dedupe_${tag}`));
  if (kind === 'redis') {
    const { Redis } = await import('ioredis');
    const r = new Redis(REDIS_URL);
    try {
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', `bench-${tag}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await r.del(...keys);
      } while (cursor !== '0');
    } finally {
      r.disconnect();
    }
  }
}

export async function withDb<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Whether PostgreSQL and Redis answer (the sections that need them are skipped otherwise). */
export async function storesAnswer(): Promise<string | undefined> {
  try {
    await withDb((c) => c.query('SELECT 1'));
  } catch (err) {
    return `PostgreSQL at ${DATABASE_URL.replace(/:[^:@/]*@/, ':***@')}: ${(err as Error).message}`;
  }
  return undefined;
}

export const OUTBOX_DDL = (t: string): string => `CREATE TABLE ${t} (seq bigserial PRIMARY KEY, id text NOT NULL UNIQUE, exchange text NOT NULL, routing_key text NOT NULL,
  payload bytea NOT NULL, headers jsonb NOT NULL DEFAULT '{}', properties jsonb NOT NULL DEFAULT '{}', order_key text,
  status text NOT NULL DEFAULT 'pending', attempts integer NOT NULL DEFAULT 0, next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text, created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz)`;

/** A fresh, empty outbox table with its indexes. */
export async function prepareOutbox(table: string): Promise<void> {
  await withDb(async (c) => {
    await c.query(`DROP TABLE IF EXISTS ${table}`);
    await c.query(OUTBOX_DDL(table));
    await c.query(`CREATE INDEX ON ${table} (seq) WHERE status = 'pending'`);
    await c.query(`CREATE INDEX ON ${table} (order_key, seq) WHERE status = 'pending'`);
    await c.query(`CREATE INDEX ON ${table} (sent_at) WHERE status = 'sent'`);
  });
}

/** `count` pending 1 KB events for `queue` (default exchange) in one statement, and the NOTIFY a write sends (unless `notify` is false). */
export async function fillOutbox(c: pg.Client, table: string, queue: string, count: number, body: Buffer, notify = true): Promise<void> {
  await c.query(
    `INSERT INTO ${table} (id, exchange, routing_key, payload, properties) SELECT 'e-' || g, '', $1, $2, '{"contentType":"application/json","persistent":true}' FROM generate_series(1, $3) g`,
    [queue, body, count],
  );
  if (notify) await c.query('SELECT pg_notify($1, $2)', [`${table}_outbox`, '']);
}

export async function dropTable(table: string): Promise<void> {
  await withDb((c) => c.query(`DROP TABLE IF EXISTS ${table}`));
}

async function sentCount(c: pg.Client, table: string): Promise<number> {
  return Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE status = 'sent'`)).rows[0]?.n ?? 0);
}

/** The package's relay (running, idle) publishing `count` rows written at once: from the write until every row is marked sent. */
export async function pkgRelay(ctx: Ctx, { table, queue, count, body }: { table: string; queue: string; count: number; body: Buffer }): Promise<RunResult> {
  await loadFlow([tab(), benchBroker(ctx), { id: 'db', type: 'retry-postgres', url: DATABASE_URL }, { id: 'relay', type: 'outbox-relay', z: 'flow', broker: 'broker', postgres: 'db', table, mode: 'check', batchSize: '100', pollSeconds: '5', wires: [[]] }]);
  try {
    await sleep(500); // connected, listening, idle
    return await withDb((c) =>
      timed(count, async () => {
        await fillOutbox(c, table, queue, count, body);
        const deadline = Date.now() + timeoutFor(count);
        while ((await sentCount(c, table)) < count) {
          if (Date.now() > deadline) throw new Error(`outbox relay: ${await sentCount(c, table)} of ${count} sent`);
          await sleep(5);
        }
      }),
    );
  } finally {
    await unloadFlow();
  }
}

/**
 * A careful hand-written relay: pg + an amqplib confirm channel, batches of 100 claimed FOR UPDATE
 * SKIP LOCKED, published with mandatory, waitForConfirms, marked sent in the same transaction.
 */
export async function rawRelay({ model, table, queue, count, body }: { model: ChannelModel; table: string; queue: string; count: number; body: Buffer }): Promise<RunResult> {
  const ch = await model.createConfirmChannel();
  try {
    return await withDb((c) =>
      timed(count, async () => {
        await fillOutbox(c, table, queue, count, body);
        let sent = 0;
        while (sent < count) {
          await c.query('BEGIN');
          const rows = (await c.query<{ seq: string; id: string; exchange: string; routing_key: string; payload: Buffer; properties: Record<string, unknown> }>(
            `SELECT seq, id, exchange, routing_key, payload, properties FROM ${table} WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY seq LIMIT 100 FOR UPDATE SKIP LOCKED`,
          )).rows;
          for (const r of rows) ch.publish(r.exchange, r.routing_key, r.payload, { ...r.properties, messageId: r.id, mandatory: true });
          await ch.waitForConfirms();
          await c.query(`UPDATE ${table} SET status = 'sent', sent_at = now(), attempts = attempts + 1 WHERE seq = ANY($1::bigint[])`, [rows.map((r) => r.seq)]);
          await c.query('COMMIT');
          sent += rows.length;
          if (rows.length === 0) await sleep(5);
        }
      }),
    );
  } finally {
    await ch.close().catch(() => undefined);
  }
}

