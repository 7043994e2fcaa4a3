/**
 * One claimed batch of outbox rows, the pure parts: the statements that claim and mark it, and what
 * the publishes' outcomes make of each row (sent; or an attempt more, a backoff, `failed` after the
 * last attempt).
 */
import { cappedDelay } from '../backoff';
import type { Queryable } from '../postgres';

export interface Row {
  seq: string;
  id: string;
  exchange: string;
  routing_key: string;
  payload: Buffer;
  headers: Record<string, unknown> | null;
  properties: Record<string, unknown> | null;
  attempts: number;
}

/** A row whose publish failed: why, whether that was its last attempt, and the pause before the next. */
export interface RowFailure {
  row: Row;
  error: string;
  final: boolean;
  delayMs: number;
}

/** What a batch came to: the rows sent and the rows that failed. */
export interface BatchOutcome {
  sent: Row[];
  failures: RowFailure[];
}

/** The pause before attempt `attempts + 1`, after `attempts` failures: the reconnect's backoff without jitter, doubling. Pure. */
export function backoffMs(attempts: number, initialMs: number, maxMs: number): number {
  return cappedDelay(attempts, { initialMs, maxMs, factor: 2 });
}

/**
 * The claim: pending rows that are due, oldest first, at most `batchSize` (inlined: it goes in a
 * simple query, see claimOpening), locked (`FOR UPDATE SKIP LOCKED`: another relay, or another batch
 * of this one still in flight, holds the rows it skips). Ordered: a row is left while an earlier row
 * of its key is pending, which includes a row locked by a batch in flight (its `sent` is not
 * committed yet), so a key's next row waits until its previous one is marked sent. With sorting off
 * (claimOpening) it walks the pending rows' index on `seq` (schema.ts) and stops at the LIMIT: no row
 * beyond the batch is read, none is sorted. The payload comes as base64 text (decodeClaimed): a
 * simple query answers in text, where bytea is hex, twice the payload's size to receive and decode;
 * base64 is 4/3 of it.
 */
export function claimSql(table: string, ordered: boolean, batchSize: number): string {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`a batch must be a whole number ≥ 1 of rows, not ${batchSize}`);
  const order = ordered ? ` AND NOT EXISTS (SELECT 1 FROM ${table} e WHERE e.order_key = o.order_key AND e.status = 'pending' AND e.seq < o.seq)` : '';
  return `SELECT seq, id, exchange, routing_key, encode(payload, 'base64') AS payload, headers, properties, attempts FROM ${table} o
       WHERE status = 'pending' AND next_attempt_at <= now()${order}
       ORDER BY seq LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
}

/**
 * What opens a claiming transaction and claims, in one round trip (a simple query): BEGIN, sorting off
 * for the transaction, the claim. Before a table's first ANALYZE the planner guesses a few hundred
 * pending rows and would read them all through a bitmap scan and sort them (10–20 ms a claim with
 * 20 000 pending, every row's page read); with no sort it can only walk an index in `seq` order, the
 * pending rows' one, and stops at the LIMIT (0.3 ms). Nothing else in the transaction sorts (the
 * marks update rows by `seq`). Pure.
 */
export function claimOpening(table: string, ordered: boolean, batchSize: number): string {
  return `BEGIN; SET LOCAL enable_sort = off; ${claimSql(table, ordered, batchSize)}`;
}

/** The claim's rows as the relay publishes them: each payload, base64 text from the claim (claimSql), decoded in place (a Buffer already is left). Pure but for the rows it is given. */
export function decodeClaimed(rows: ReadonlyArray<Omit<Row, 'payload'> & { payload: Buffer | string }>): Row[] {
  for (const row of rows) if (typeof row.payload === 'string') row.payload = Buffer.from(row.payload, 'base64');
  return rows as Row[];
}

/** Each row's outcome (undefined: confirmed; else why not) sorted into sent and failed. Pure. */
export function batchOutcome(rows: readonly Row[], outcomes: ReadonlyArray<string | undefined>, maxAttempts: number, backoff: { initialMs: number; maxMs: number }): BatchOutcome {
  const result: BatchOutcome = { sent: [], failures: [] };
  rows.forEach((row, i) => {
    const error = outcomes[i];
    if (error === undefined) {
      result.sent.push(row);
      return;
    }
    const attempts = row.attempts + 1;
    result.failures.push({ row, error, final: attempts >= maxAttempts, delayMs: backoffMs(attempts, backoff.initialMs, backoff.maxMs) });
  });
  return result;
}

const WHOLE_NUMBER = /^\d+$/;

/**
 * The statement that marks a batch's confirmed rows sent — or deletes them, when sent rows are not
 * kept (`keep` false: no new row version, no index entries; median 1.19× in A/B pairs) — for
 * the COMMIT's round trip (a simple query: the `seq`s inlined, each checked to be one); undefined
 * when none was confirmed. Pure.
 */
export function markSentSql(table: string, sent: readonly Row[], keep = true): string | undefined {
  if (sent.length === 0) return undefined;
  let seqs = '';
  for (const { seq } of sent) {
    if (!WHOLE_NUMBER.test(seq)) throw new Error(`outbox row seq ${JSON.stringify(seq)} is not a whole number`);
    seqs += seqs === '' ? seq : `,${seq}`;
  }
  const rows = `seq = ANY('{${seqs}}'::bigint[])`;
  return keep ? `UPDATE ${table} SET status = 'sent', sent_at = now(), attempts = attempts + 1, last_error = NULL WHERE ${rows}` : `DELETE FROM ${table} WHERE ${rows}`;
}

/** Marks a batch's failed rows (another attempt after the backoff, or `failed`) on the claiming transaction's connection. */
export async function markFailures(client: Queryable, table: string, failures: readonly RowFailure[]): Promise<void> {
  if (failures.length === 0) return;
  await client.query(
    `UPDATE ${table} t SET attempts = t.attempts + 1, last_error = f.error,
            status = CASE WHEN f.final THEN 'failed' ELSE 'pending' END,
            next_attempt_at = now() + f.delay * interval '1 millisecond'
       FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::bigint[]) AS f(seq, error, final, delay)
      WHERE t.seq = f.seq`,
    [failures.map((f) => f.row.seq), failures.map((f) => f.error), failures.map((f) => f.final), failures.map((f) => f.delayMs)],
  );
}
