/**
 * What a msg asks of an outbox relay (msg.topic): `failed` lists the rows given up on (msg.payload.limit,
 * default 100); `retry` sends failed rows again (msg.payload: an id, ids, or nothing for all).
 */
import type { Queryable } from '../../lib/postgres';
import type { Translate } from '../shared/i18n';
import type { NodeMessage } from '../shared/node-red';

export interface RelayCommandContext {
  database: Queryable;
  /** The table, quoted for SQL. */
  table: string;
  t: Translate;
  /** Failed rows were set pending again. */
  retried(): void;
}

/** The msg answered (its payload replaced), or why not. */
export function relayCommand(msg: NodeMessage, c: RelayCommandContext): Promise<NodeMessage> {
  const topic = typeof msg.topic === 'string' ? msg.topic : '';
  if (topic === 'failed') return failedRows(msg, c);
  if (topic === 'retry') return retryFailed(msg, c);
  return Promise.reject(new Error(c.t('outbox-relay.errors.topic', { topic: JSON.stringify(msg.topic ?? null) })));
}

async function failedRows(msg: NodeMessage, c: RelayCommandContext): Promise<NodeMessage> {
  const limit = Number((msg.payload as { limit?: unknown } | undefined)?.limit ?? 100);
  const result = await c.database.query(
    `SELECT id, exchange, routing_key AS "routingKey", attempts, last_error AS "lastError", created_at AS "createdAt", order_key AS "orderKey"
       FROM ${c.table} WHERE status = 'failed' ORDER BY seq LIMIT $1`,
    [Number.isInteger(limit) && limit > 0 ? limit : 100],
  );
  msg.payload = result.rows;
  return msg;
}

async function retryFailed(msg: NodeMessage, c: RelayCommandContext): Promise<NodeMessage> {
  const given: unknown = msg.payload;
  const ids = given === undefined || given === null || given === '' ? null : (Array.isArray(given) ? given : [given]).map((id) => (typeof id === 'string' ? id : JSON.stringify(id)));
  const result = await c.database.query(`UPDATE ${c.table} SET status = 'pending', attempts = 0, next_attempt_at = now() WHERE status = 'failed' AND ($1::text[] IS NULL OR id = ANY($1::text[]))`, [ids]);
  msg.payload = { retried: result.rowCount ?? 0 };
  c.retried();
  return msg;
}
