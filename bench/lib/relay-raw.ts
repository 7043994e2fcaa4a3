/**
 * A careful hand-written pipelined outbox relay, for the outbox section's "relay vs publish" pair: raw
 * pg and amqplib doing what the package's relay does on the same table, with nothing else — a batch
 * of 100 pending rows claimed in `seq` order (`FOR UPDATE SKIP LOCKED`, walking the partial index on
 * `seq`) in the round trip of its BEGIN, published with `mandatory` and a confirm each, marked sent in
 * the round trip of its COMMIT once every confirm came; up to 3 batches in flight, each a transaction
 * on a connection of its own, committed in the order claimed. Plain bench code: what the protocol
 * itself costs on this machine without the package.
 */
import pg from 'pg';
import type { ChannelModel } from 'amqplib';
import type { RunResult } from './common';
import { timed } from './scenarios';
import { DATABASE_URL, fillOutbox, withDb } from './store-scenarios';

interface EventRow {
  seq: string;
  id: string;
  exchange: string;
  routing_key: string;
  payload: Buffer;
  properties: Record<string, unknown>;
}

const IN_FLIGHT = 3;
const BATCH = 100;

/** Publishes the `count` rows written to `table` before the clock starts; timed until every row is marked sent. */
export async function rawPipelinedRelay({ model, table, queue, count, body }: { model: ChannelModel; table: string; queue: string; count: number; body: Buffer }): Promise<RunResult> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: IN_FLIGHT + 1 });
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  const claim = `BEGIN; SET LOCAL enable_sort = off;
    SELECT seq, id, exchange, routing_key, payload, properties FROM ${table}
     WHERE seq = ANY(ARRAY(SELECT seq FROM ${table} WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED))
     ORDER BY seq`;
  try {
    await withDb((c) => fillOutbox(c, table, queue, count, body, false));
    return await timed(count, async () => {
      const inFlight = new Set<Promise<void>>();
      let previous: Promise<void> = Promise.resolve();
      for (;;) {
        while (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
        const client = await pool.connect();
        const answers = (await client.query(claim)) as unknown as pg.QueryResult[];
        const rows = (answers[answers.length - 1] as pg.QueryResult<EventRow>).rows;
        if (rows.length === 0) {
          await client.query('ROLLBACK');
          client.release();
          // Rows locked by batches in flight are skipped: done only when none is in flight.
          if (inFlight.size === 0) return;
          await Promise.race(inFlight);
          continue;
        }
        const confirms = rows.map(
          (row) =>
            new Promise<void>((resolve, reject) => {
              ch.publish(row.exchange, row.routing_key, row.payload, { ...row.properties, messageId: row.id, mandatory: true }, (err: unknown) => (err ? reject(new Error('nacked')) : resolve()));
            }),
        );
        const before = previous;
        const batch = (async (): Promise<void> => {
          try {
            await Promise.all(confirms);
            await before; // committed in the order claimed
            await client.query(`UPDATE ${table} SET status = 'sent', sent_at = now(), attempts = attempts + 1 WHERE seq IN (${rows.map((r) => r.seq).join(',')}); COMMIT`);
          } finally {
            client.release();
          }
        })();
        previous = batch;
        inFlight.add(batch);
        void batch.finally(() => inFlight.delete(batch)).catch(() => undefined);
      }
    });
  } finally {
    await ch.close().catch(() => undefined);
    await pool.end();
  }
}
