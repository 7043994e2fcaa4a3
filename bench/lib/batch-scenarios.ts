/**
 * Bench scenarios of batch consumption (issue 51), against the real broker and PostgreSQL
 * (DATABASE_URL): the package's retry-consumer in batch mode writing one multi-row INSERT per batch
 * the way the docs recommend (a `bench-call` node puts the statement in msg.statements, an
 * `outbox write` with its event off runs it on a `retry-postgres` config, a `retry-settle` acks every
 * item), and the same flow with batch mode off (one INSERT per message); the hand-written consumers
 * are in batch-raw.ts. Each run is timed by the amqplib probe (common.ts):
 * a `multiple` ack counts every delivery it settles.
 */
import type { Names } from '../../test/helpers/flows';
import { tab } from '../../test/helpers/flows';
import { armProbe, probeCounts, probeResult, withTimeout, type RunResult } from './common';
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

export function insertOne(table: string, id: string, body: string): { sql: string; params: unknown[] } {
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
