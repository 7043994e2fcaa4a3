/**
 * The batch section's hand-written consumers (issue 51): plain amqplib + pg, careful, with nothing
 * of the package — what the work itself costs on this machine. A batch consumer (`rawBatches`:
 * prefetch 2 × the batch size, a batch going at `size` deliveries or BATCH_WAIT_MS after its first,
 * its bodies decoded as the package decodes them, one `multiple` ack a batch once it and every batch
 * before it are done) that writes one multi-row INSERT a batch (`rawBatchPg`), deduplicates on
 * PostgreSQL in two statements a batch or does nothing more (`rawBatchDedupe`); and a consumer doing
 * one INSERT a message (`rawPerMessagePg`). Each run is timed by the amqplib probe (common.ts).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ConsumeMessage } from 'amqplib';
import { armProbe, connect, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { BATCH_SIZE, BATCH_WAIT_MS, insertMany, insertOne } from './batch-scenarios';
import { timeoutFor } from './scenarios';
import { DATABASE_URL } from './store-scenarios';

/** A batch being done: acked (multiple, up to its last delivery) once it and every batch before it are done. */
interface Pending {
  last: ConsumeMessage;
  done: boolean;
}

/** A batch's deliveries with their bodies decoded (JSON.parse, as the package's decode). */
interface Decoded {
  messages: ConsumeMessage[];
  bodies: unknown[];
}

/** Consumes `count` deliveries of `queue` in batches, each `work`ed then acked in order; `label` names the run in a timeout. */
async function rawBatches({ queue, count, label, work, size = BATCH_SIZE }: { queue: string; count: number; label: string; work: (batch: Decoded) => Promise<void>; size?: number }): Promise<RunResult> {
  const model = await connect(`bench raw ${label}`);
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(2 * size);
    let fail: (err: unknown) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => {
      fail = reject;
    });
    let items: ConsumeMessage[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pending: Pending[] = [];
    const acked = (): void => {
      while (pending[0]?.done) ch.ack((pending.shift() as Pending).last, true);
    };
    const flush = (): void => {
      clearTimeout(timer);
      timer = undefined;
      const messages = items;
      items = [];
      const bodies = messages.map((m) => JSON.parse(m.content.toString('utf8')) as unknown);
      const entry: Pending = { last: messages[messages.length - 1] as ConsumeMessage, done: false };
      pending.push(entry);
      work({ messages, bodies }).then(() => {
        entry.done = true;
        acked();
      }, fail);
    };
    const done = armProbe(count);
    await ch.consume(queue, (m) => {
      if (m === null) return;
      items.push(m);
      if (items.length >= size) flush();
      else timer ??= setTimeout(flush, BATCH_WAIT_MS);
    });
    await withTimeout(Promise.race([done, failed]), timeoutFor(count), `hand-written ${label}: ${count} acks (got ${probeCounts().acks})`);
    clearTimeout(timer);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
  }
}

const idOf = (m: ConsumeMessage): string => String(m.properties.messageId);

/** Batches of 500 → one multi-row INSERT each (ids the message ids, bodies as JSON) on a pool of 2: a batch written while the next one collects. */
export async function rawBatchPg({ queue, table, count }: { queue: string; table: string; count: number }): Promise<RunResult> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  try {
    return await rawBatches({
      queue,
      count,
      label: 'batch consumer → PostgreSQL',
      work: async ({ messages, bodies }) => {
        const { sql, params } = insertMany(table, messages.map(idOf), bodies.map((b) => JSON.stringify(b)));
        await pool.query(sql, params);
      },
    });
  } finally {
    await pool.end();
  }
}

/**
 * One INSERT a message, the way one would write it by hand: prefetch 100, a pool of 10, each message
 * acked on its own once its row is written.
 */
export async function rawPerMessagePg({ queue, table, count, prefetch = 100 }: { queue: string; table: string; count: number; prefetch?: number }): Promise<RunResult> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
  const model = await connect('bench raw consumer, one INSERT a message');
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(prefetch);
    let fail: (err: unknown) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const done = armProbe(count);
    await ch.consume(queue, (m) => {
      if (m === null) return;
      const { sql, params } = insertOne(table, idOf(m), JSON.stringify(JSON.parse(m.content.toString('utf8'))));
      pool.query(sql, params).then(() => ch.ack(m), fail);
    });
    await withTimeout(Promise.race([done, failed]), timeoutFor(count), `hand-written consumer, one INSERT a message: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
    await pool.end();
  }
}

const LEASE_MS = 20_000;
const RETENTION_MS = 3_600_000;

/**
 * Batches of 500 → ack, deduplicated on PostgreSQL (`dedupe`) or not. With it: the package's table
 * shape (one row per (scope, key), the queue as the scope; a lease or a retention as its expiry), a
 * batch's keys claimed in ONE statement (inserted, or taken over when their lease ended; the keys
 * taken returned), a key not taken acked as a duplicate, then the taken keys recorded as processed in
 * ONE statement before the batch's ack; a pool of 4 (the two batches of the prefetch in flight).
 */
export async function rawBatchDedupe({ queue, count, dedupe }: { queue: string; count: number; dedupe: boolean }): Promise<RunResult> {
  if (!dedupe) return rawBatches({ queue, count, label: 'batch consumer, no deduplication', work: () => Promise.resolve() });
  const table = `bench_batch_dedupe_${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  await pool.query(`CREATE TABLE ${table} (scope text NOT NULL, key text NOT NULL, state text NOT NULL, owner text, expires_at timestamptz NOT NULL, PRIMARY KEY (scope, key))`);
  const claim = {
    name: `bench_raw_batch_claim_${table}`,
    text: `INSERT INTO ${table} AS t (scope, key, state, owner, expires_at) SELECT $1, k, 'claimed', $3, now() + $4 * interval '1 millisecond' FROM unnest($2::text[]) k
           ON CONFLICT (scope, key) DO UPDATE SET state = 'claimed', owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
            WHERE t.expires_at <= now() OR (t.state = 'claimed' AND t.owner = EXCLUDED.owner)
           RETURNING key`,
  };
  const complete = {
    name: `bench_raw_batch_complete_${table}`,
    text: `INSERT INTO ${table} (scope, key, state, owner, expires_at) SELECT $1, k, 'done', NULL, now() + $3 * interval '1 millisecond' FROM unnest($2::text[]) k
           ON CONFLICT (scope, key) DO UPDATE SET state = 'done', owner = NULL, expires_at = EXCLUDED.expires_at`,
  };
  try {
    return await rawBatches({
      queue,
      count,
      label: 'batch consumer, PostgreSQL deduplication',
      work: async ({ messages }) => {
        const { rows } = await pool.query<{ key: string }>({ ...claim, values: [queue, messages.map(idOf), 'raw', LEASE_MS] });
        // Duplicates (none here: every key is new) would be acked with the batch, unprocessed.
        await pool.query({ ...complete, values: [queue, rows.map((r) => r.key), RETENTION_MS] });
      },
    });
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await pool.end();
  }
}
