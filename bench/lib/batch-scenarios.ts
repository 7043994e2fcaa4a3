/**
 * Bench scenarios of batch consumption (issue 51), against the real broker and PostgreSQL
 * (DATABASE_URL): the package's retry-consumer in batch mode writing one multi-row INSERT per batch
 * the way the docs recommend (a `bench-call` node puts the statement in msg.statements, an
 * `outbox write` with its event off runs it on a `retry-postgres` config, a `retry-settle` acks every
 * item), the same flow with batch mode off (one INSERT per message), and a careful hand-written
 * amqplib + pg batch consumer doing the same work. Each run is timed by the amqplib probe (common.ts):
 * a `multiple` ack counts every delivery it settles.
 */
import pg from 'pg';
import type { ConsumeMessage } from 'amqplib';
import type { Names } from '../../test/helpers/flows';
import { tab } from '../../test/helpers/flows';
import { armProbe, connect, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { benchHooks, loadFlow, unloadFlow, type FlowNode, type Msg } from './nodered';
import { benchBroker, benchConfig, benchConsumer, settleNode, timeoutFor, type Ctx } from './scenarios';
import { DATABASE_URL, withDb } from './store-scenarios';

export const BATCH_SIZE = 500;
/** How long a batch's first delivery waits for the rest (the consumer's default). */
export const BATCH_WAIT_MS = 200;

/** The tables of one batch section run: the rows written, and the outbox table the write node checks (its event is off). */
export interface BatchTables {
  rows: string;
  outbox: string;
}

/** The consumer's properties in batch mode (its prefetch follows: 2 × the batch size). */
export const batchConsumer = (size = BATCH_SIZE): Record<string, unknown> => ({ batch: true, batchSize: String(size), batchWait: String(BATCH_WAIT_MS) });

/** A fresh, empty rows table: one row per message, its id the message id, its body the payload. */
export async function prepareRows(table: string): Promise<void> {
  await withDb(async (c) => {
    await c.query(`DROP TABLE IF EXISTS ${table}`);
    await c.query(`CREATE TABLE ${table} (id text PRIMARY KEY, body jsonb NOT NULL)`);
  });
}

export const truncateRows = (table: string): Promise<unknown> => withDb((c) => c.query(`TRUNCATE ${table}`));

/** One multi-row INSERT of many rows: two array parameters, unnested (the statement is the same whatever the batch size). */
export function insertMany(table: string, ids: string[], bodies: string[]): { sql: string; params: unknown[] } {
  return { sql: `INSERT INTO ${table} (id, body) SELECT * FROM unnest($1::text[], $2::jsonb[])`, params: [ids, bodies] };
}

function insertOne(table: string, id: string, body: string): { sql: string; params: unknown[] } {
  return { sql: `INSERT INTO ${table} (id, body) VALUES ($1, $2)`, params: [id, body] };
}

/**
 * The flow's statement for a msg: a batch msg's items in one multi-row INSERT (ids from each item's
 * message id, bodies its payload as JSON), a single msg's row in one INSERT.
 */
function statementOf(table: string, msg: Msg): { sql: string; params: unknown[] } {
  const items = (msg.amqp as { items?: Array<{ properties: { messageId?: unknown } }> }).items;
  if (!items) return insertOne(table, String(msg.amqp.properties.messageId), JSON.stringify(msg.payload));
  const payloads = msg.payload as unknown[];
  const ids: string[] = [];
  const bodies: string[] = [];
  for (const [i, item] of items.entries()) {
    ids.push(String(item.properties.messageId));
    bodies.push(JSON.stringify(payloads[i]));
  }
  return insertMany(table, ids, bodies);
}

/**
 * consumer (batch mode when `batch`, else one msg per message) → the statement (bench-call) →
 * outbox write (event off: the statements only, in one transaction) → retry-settle ack; `count`
 * messages acked.
 */
export async function pkgBatchPg(ctx: Ctx, { topo, tables, count, prefetch, batch }: { topo: Names; tables: BatchTables; count: number; prefetch: number; batch: boolean }): Promise<RunResult> {
  const done = armProbe(count);
  benchHooks.onInput = (msg, send, finish) => {
    msg.statements = [statementOf(tables.rows, msg)];
    send(msg);
    finish();
  };
  const flow: FlowNode[] = [
    tab(),
    benchBroker(ctx),
    benchConfig(topo),
    { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
    benchConsumer([['rows']], prefetch, batch ? batchConsumer() : {}),
    { id: 'rows', type: 'bench-call', z: 'flow', wires: [['write']] },
    { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table: tables.outbox, mode: 'declare', event: false, wires: [['ack']] },
    settleNode('ack', 'ack'),
  ];
  await loadFlow(flow);
  try {
    await withTimeout(done, timeoutFor(count), `package consumer${batch ? ' in batch mode' : ''} → INSERT: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    benchHooks.onInput = undefined;
    await unloadFlow();
  }
}

/** A batch the hand-written consumer wrote or is writing: acked (multiple, up to its last delivery) once it and every batch before it are written. */
interface Written {
  last: ConsumeMessage;
  done: boolean;
}

/**
 * A careful hand-written batch consumer: raw amqplib (prefetch 2 × the batch size, as the package's)
 * and pg (a pool of 2: a batch written while the next one collects). A batch goes when it holds
 * `size` deliveries or `BATCH_WAIT_MS` after its first; its bodies are decoded (JSON.parse, the
 * package's decode) and written as JSON in the same multi-row INSERT; once written — and every
 * batch before it — it is acked with one `multiple` ack.
 */
export async function rawBatchPg({ queue, table, count, size = BATCH_SIZE }: { queue: string; table: string; count: number; size?: number }): Promise<RunResult> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const model = await connect('bench raw batch consumer');
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
    const writing: Written[] = [];
    const written = (): void => {
      while (writing[0]?.done) ch.ack((writing.shift() as Written).last, true);
    };
    const flush = (): void => {
      clearTimeout(timer);
      timer = undefined;
      const batch = items;
      items = [];
      const ids: string[] = [];
      const bodies: string[] = [];
      for (const m of batch) {
        ids.push(String(m.properties.messageId));
        bodies.push(JSON.stringify(JSON.parse(m.content.toString('utf8'))));
      }
      const entry: Written = { last: batch[batch.length - 1] as ConsumeMessage, done: false };
      writing.push(entry);
      const { sql, params } = insertMany(table, ids, bodies);
      pool.query(sql, params).then(() => {
        entry.done = true;
        written();
      }, fail);
    };
    const done = armProbe(count);
    await ch.consume(queue, (m) => {
      if (m === null) return;
      items.push(m);
      if (items.length >= size) flush();
      else timer ??= setTimeout(flush, BATCH_WAIT_MS);
    });
    await withTimeout(Promise.race([done, failed]), timeoutFor(count), `hand-written batch consumer: ${count} acks (got ${probeCounts().acks})`);
    clearTimeout(timer);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
    await pool.end();
  }
}
