/**
 * Writing to the outbox: the flow's statements and the event row in one transaction, then a NOTIFY
 * that wakes the relays. A failing statement rolls everything back and is named.
 */
import type { Queryable, QueryResult, TableName, TransactionOptions } from '../postgres';
import { outboxChannel } from './schema';

export interface OutboxStatement {
  sql: string;
  params?: unknown[];
}

/** The event as a row: the relay publishes it as is, with `id` as its messageId. */
export interface OutboxEvent {
  id: string;
  exchange: string;
  routingKey: string;
  content: Buffer;
  headers: Record<string, unknown>;
  properties: Record<string, unknown>;
  orderKey?: string;
}

export interface StatementResult {
  command: string;
  rowCount: number;
  rows: unknown[];
}

/** What runs the transaction (narrow: one transaction at a time) and the NOTIFY after it: the database. */
export interface Transactional extends Queryable {
  /** `options`: statements in the BEGIN's and the COMMIT's round trips (PostgresDatabase.transaction). */
  transaction<T>(work: (client: Queryable, opened: QueryResult) => Promise<T>, options?: TransactionOptions<T>): Promise<T>;
}

/** A statement that failed, named by its place and text; everything was rolled back. */
export class StatementError extends Error {
  constructor(
    readonly index: number,
    readonly sql: string,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'StatementError';
  }
}

/** Why `statements` is not a list of `{sql, params}`, or undefined. Pure. */
export function statementsProblem(statements: unknown): string | undefined {
  if (!Array.isArray(statements)) return 'msg.statements must be an array of {sql, params}';
  for (const [i, s] of statements.entries()) {
    if (!s || typeof s !== 'object') return `msg.statements[${i}] must be an object {sql, params}`;
    const { sql, params } = s as Record<string, unknown>;
    if (typeof sql !== 'string' || sql.trim() === '') return `msg.statements[${i}].sql must be a non-empty string`;
    if (params !== undefined && !Array.isArray(params)) return `msg.statements[${i}].params must be an array (parameters $1, $2, …)`;
  }
  return undefined;
}

function shortSql(sql: string): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  return one.length > 80 ? `${one.slice(0, 77)}...` : one;
}

/** The `i`-th of `of` statements, its failure named. */
async function run(client: Queryable, statement: OutboxStatement, i: number, of: number): Promise<StatementResult> {
  try {
    const result = await client.query(statement.sql, statement.params ?? []);
    return { command: result.command, rowCount: result.rowCount ?? 0, rows: result.rows };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    throw new StatementError(i, statement.sql, e.code, `statement ${i + 1} of ${of} failed (${shortSql(statement.sql)}): ${e.message ?? String(err)}; nothing was written`);
  }
}

/**
 * Runs the statements and inserts the event (when given) in one transaction; resolves with each
 * statement's result once committed. Rejects with a {@link StatementError} when a statement fails.
 */
export async function writeOutbox(
  db: Transactional,
  table: TableName,
  statements: readonly OutboxStatement[],
  event: OutboxEvent | undefined,
  /** More work in the same transaction (e.g. recording a deduplication key as processed). */
  also?: (client: Queryable) => Promise<void>,
): Promise<StatementResult[]> {
  const [only] = statements;
  // One statement and nothing else: it is its own transaction (all or nothing) — one round trip, not
  // BEGIN, it and COMMIT (a batch of 500 as one multi-row INSERT, or one row a message).
  if (statements.length === 1 && only !== undefined && !event && !also) return [await run(db, only, 0, 1)];
  const written = await db.transaction(async (client) => {
    const results: StatementResult[] = [];
    for (const [i, statement] of statements.entries()) results.push(await run(client, statement, i, statements.length));
    if (event) {
      try {
        await client.query(
          `INSERT INTO ${table.sql} (id, exchange, routing_key, payload, headers, properties, order_key) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [event.id, event.exchange, event.routingKey, event.content, JSON.stringify(event.headers), JSON.stringify(event.properties), event.orderKey ?? null],
        );
      } catch (err) {
        const e = err as { message?: string; code?: string };
        const why = e.code === '23505' ? `an event with id '${event.id}' is already in the outbox` : (e.message ?? String(err));
        throw new StatementError(statements.length, 'INSERT INTO outbox', e.code, `the event could not be written to ${table.sql}: ${why}; nothing was written`);
      }
    }
    if (also) await also(client);
    return results;
  });
  // The NOTIFY after the commit, not in the transaction: PostgreSQL commits notifying transactions one
  // at a time (a lock held through the commit's disk write), which held 10 writers to about 400 writes
  // a second on the benchmark machine, against about 1 800 with the NOTIFY after. The event is
  // committed either way: a NOTIFY that fails only leaves it to the relays' next poll.
  if (event) await db.query('SELECT pg_notify($1, $2)', [outboxChannel(table), event.id]).catch(() => undefined);
  return written;
}
