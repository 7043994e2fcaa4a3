/**
 * The outbox relay: publishes pending rows with confirms and `mandatory`, marks them sent in the
 * transaction that claimed them, and retries failed ones with a capped backoff until they are
 * `failed` (the outbox's parking). Several relays share one table: a batch is claimed with
 * `FOR UPDATE SKIP LOCKED`. It wakes on NOTIFY (a write just committed) and polls as well; sent rows
 * are deleted after the retention. With `ordered`, rows of one order key go out one at a time, in
 * the order they were written (a row waits while an earlier one of its key is pending).
 */
import { EventEmitter } from 'node:events';
import type { Queryable, TableName } from '../postgres';
import { messagingAttributes, newTraceparent, setTrace, spanName, traceOf, type MessageTracer } from '../trace';
import type { Transactional } from './write';

/** Publishes one event; resolves once the broker confirmed it and did not return it. */
export interface EventPublisher {
  publish(exchange: string, routingKey: string, content: Buffer, options: Record<string, unknown>): Promise<void>;
  /**
   * Whether an exchange exists (a passive check on a channel of its own). A publish to a missing one
   * closes the publishing channel with a 404, failing the other rows in flight with it, which would
   * then go out twice: rows for a missing exchange are held back before anything is published.
   */
  exchangeExists?(exchange: string): Promise<boolean>;
}

/** How long an exchange seen to exist is not checked again. */
const EXCHANGE_SEEN_MS = 30_000;

export interface RelayOptions {
  db: Transactional & Queryable;
  table: TableName;
  publisher: EventPublisher;
  /** Rows per claim; default 100. */
  batchSize?: number;
  /** How often the table is looked at without a NOTIFY; default 5 s. */
  pollMs?: number;
  /** Publishes tried before a row is `failed`; default 10. */
  maxAttempts?: number;
  /** Pause after the first failure, doubling up to the cap; defaults 1 s and 5 min. */
  backoff?: { initialMs: number; maxMs: number };
  /** How long sent rows are kept; default 7 days (0: kept). */
  retentionMs?: number;
  /** Per-key order (`order_key`), at the cost of concurrency. */
  ordered?: boolean;
  /** How long one publish may wait for its confirm before it counts as failed; default 30 s. */
  publishTimeoutMs?: number;
  /** A span per publish (OpenTelemetry, when the process records them), a child of the row's trace context. */
  tracer?: MessageTracer;
}

export interface RelayStats {
  sent: number;
  retried: number;
  failed: number;
}

/** What the relay's table holds: pending and failed rows, and how long the oldest pending one has waited. */
export interface RelayCounts {
  pending: number;
  failed: number;
  /** Milliseconds since the oldest pending row was written (the database's clock); null: none pending. */
  oldestPendingMs: number | null;
}

export interface RelayEvents {
  /** Rows published and marked sent. */
  sent: [number];
  /** A row failed to publish: its id, why, and whether it is now `failed` for good. */
  failure: [{ id: string; error: string; final: boolean; attempts: number }];
  /** The database or the claim failed (the relay tries again after the poll interval). */
  error: [string];
  /** The relay works again after an error. */
  recovered: [];
}

interface Row {
  seq: string;
  id: string;
  exchange: string;
  routing_key: string;
  payload: Buffer;
  headers: Record<string, unknown> | null;
  properties: Record<string, unknown> | null;
  attempts: number;
}

/** The pause before attempt `attempts + 1`, after `attempts` failures. Pure. */
export function backoffMs(attempts: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, attempts - 1));
}

export class OutboxRelay extends EventEmitter<RelayEvents> {
  readonly stats: RelayStats = { sent: 0, retried: 0, failed: 0 };
  private running = false;
  private again = false;
  private stopped = true;
  private paused = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private erring = false;
  private readonly t: string;
  private readonly claimSql: string;
  /** Exchanges seen to exist, and when. */
  private readonly exchangesSeen = new Map<string, number>();

  constructor(private readonly options: RelayOptions) {
    super();
    this.t = options.table.sql;
    const order = options.ordered
      ? ` AND NOT EXISTS (SELECT 1 FROM ${this.t} e WHERE e.order_key = o.order_key AND e.status = 'pending' AND e.seq < o.seq)`
      : '';
    this.claimSql = `SELECT seq, id, exchange, routing_key, payload, headers, properties, attempts FROM ${this.t} o
       WHERE status = 'pending' AND next_attempt_at <= now()${order}
       ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`;
  }

  /** Starts relaying: at once, then on every wake and poll. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const retention = this.options.retentionMs ?? 7 * 86_400_000;
    if (retention > 0) {
      this.sweepTimer = setInterval(() => void this.sweep(retention).catch(() => undefined), 60_000);
      this.sweepTimer.unref?.();
    }
    this.wake();
  }

  /** Holds relaying (the broker is not connected); `resume` goes on. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.wake();
  }

  /** Looks at the table now (a NOTIFY came, or the broker is back). */
  wake(): void {
    if (this.stopped || this.paused) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.drain();
  }

  /** Stops: no new claim; resolves when the batch in progress is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pollTimer);
    clearInterval(this.sweepTimer);
    while (this.running) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /** Deletes sent rows older than the retention, 1000 at a time; how many went. */
  async sweep(retentionMs: number): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await this.options.db.query(
        `DELETE FROM ${this.t} WHERE seq IN (SELECT seq FROM ${this.t} WHERE status = 'sent' AND sent_at < now() - $1 * interval '1 millisecond' LIMIT 1000)`,
        [retentionMs],
      );
      total += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < 1000 || this.stopped) return total;
    }
  }

  /**
   * Rows by status (pending and failed: what an operator looks at), and the age of the oldest pending
   * row by the database's clock (null when none is pending).
   */
  async counts(): Promise<RelayCounts> {
    const result = await this.options.db.query<{ status: string; n: string; oldest_ms: string | null }>(
      `SELECT status, count(*) AS n, floor(extract(epoch FROM now() - min(created_at)) * 1000) AS oldest_ms
         FROM ${this.t} WHERE status IN ('pending', 'failed') GROUP BY status`,
    );
    const row = (status: string): (typeof result.rows)[number] | undefined => result.rows.find((r) => r.status === status);
    const oldest = row('pending')?.oldest_ms;
    return { pending: Number(row('pending')?.n ?? 0), failed: Number(row('failed')?.n ?? 0), oldestPendingMs: oldest === null || oldest === undefined ? null : Math.max(0, Number(oldest)) };
  }

  private async drain(): Promise<void> {
    this.running = true;
    clearTimeout(this.pollTimer);
    const batchSize = this.options.batchSize ?? 100;
    try {
      for (;;) {
        this.again = false;
        if (this.stopped || this.paused) break;
        const claimed = await this.cycle(batchSize);
        if (this.erring) {
          this.erring = false;
          this.emit('recovered');
        }
        if (claimed < batchSize && !this.again) break;
      }
    } catch (err) {
      if (!this.erring) {
        this.erring = true;
        this.emit('error', `outbox relay on ${this.t}: ${(err as Error).message}`);
      }
    } finally {
      this.running = false;
    }
    this.schedulePoll();
  }

  private schedulePoll(): void {
    if (this.stopped || this.paused) return;
    clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => this.wake(), this.options.pollMs ?? 5000);
    this.pollTimer.unref?.();
  }

  /** One batch: claimed, published, marked, in one transaction. How many rows it claimed. */
  private async cycle(batchSize: number): Promise<number> {
    const { maxAttempts = 10, backoff = { initialMs: 1000, maxMs: 300_000 } } = this.options;
    const done = await this.options.db.transaction(async (client) => {
      const claimed = await client.query<Row>(this.claimSql, [batchSize]);
      if (claimed.rows.length === 0) return { claimed: 0, sent: 0, failures: [] };
      const missing = await this.missingExchanges(claimed.rows);
      const outcomes = await Promise.all(
        claimed.rows.map((row) => (missing.has(row.exchange) ? Promise.resolve(`exchange '${row.exchange}' does not exist (404 NOT_FOUND): not published`) : this.publish(row))),
      );
      const sent = claimed.rows.filter((_row, i) => outcomes[i] === undefined);
      if (sent.length > 0) {
        await client.query(`UPDATE ${this.t} SET status = 'sent', sent_at = now(), attempts = attempts + 1, last_error = NULL WHERE seq = ANY($1::bigint[])`, [sent.map((r) => r.seq)]);
      }
      const failures: Array<{ row: Row; error: string; final: boolean }> = [];
      claimed.rows.forEach((row, i) => {
        const error = outcomes[i];
        if (error !== undefined) failures.push({ row, error, final: row.attempts + 1 >= maxAttempts });
      });
      if (failures.length > 0) {
        await client.query(
          `UPDATE ${this.t} t SET attempts = t.attempts + 1, last_error = f.error,
                  status = CASE WHEN f.final THEN 'failed' ELSE 'pending' END,
                  next_attempt_at = now() + f.delay * interval '1 millisecond'
             FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::bigint[]) AS f(seq, error, final, delay)
            WHERE t.seq = f.seq`,
          [
            failures.map((f) => f.row.seq),
            failures.map((f) => f.error),
            failures.map((f) => f.final),
            failures.map((f) => backoffMs(f.row.attempts + 1, backoff.initialMs, backoff.maxMs)),
          ],
        );
      }
      return { claimed: claimed.rows.length, sent: sent.length, failures };
    });
    // Counted and told once the transaction has committed, so that a look at the table sees it.
    this.stats.sent += done.sent;
    if (done.sent > 0) this.emit('sent', done.sent);
    for (const f of done.failures) {
      if (f.final) this.stats.failed += 1;
      else this.stats.retried += 1;
      this.emit('failure', { id: f.row.id, error: f.error, final: f.final, attempts: f.row.attempts + 1 });
    }
    return done.claimed;
  }

  /** The batch's exchanges that do not exist (checked at most every 30 s while they do). */
  private async missingExchanges(rows: readonly Row[]): Promise<Set<string>> {
    const missing = new Set<string>();
    const check = this.options.publisher.exchangeExists?.bind(this.options.publisher);
    if (!check) return missing;
    const now = Date.now();
    const names = [...new Set(rows.map((r) => r.exchange))].filter((name) => name !== '' && (this.exchangesSeen.get(name) ?? 0) + EXCHANGE_SEEN_MS < now);
    await Promise.all(
      names.map(async (name) => {
        if (await check(name)) this.exchangesSeen.set(name, now);
        else missing.add(name);
      }),
    );
    return missing;
  }

  /**
   * Publishes a row; undefined when confirmed, else why not. It carries the trace context of its row
   * (a new trace for a row written without one), or its relay span's when spans are recorded.
   */
  private async publish(row: Row): Promise<string | undefined> {
    const headers = Object.assign({}, row.headers);
    const trace = traceOf(headers) ?? { traceparent: newTraceparent() };
    const { tracer } = this.options;
    const span = tracer?.start(spanName('relay', row.exchange), 'producer', messagingAttributes('relay', row.exchange, row.routing_key, { properties: { messageId: row.id, correlationId: row.properties?.correlationId }, content: row.payload }), trace);
    setTrace(headers, span?.trace ?? trace);
    const options = { ...(row.properties ?? {}), headers, messageId: row.id, mandatory: true };
    const failed = await this.publishRow(row, options);
    if (span !== undefined) {
      if (failed !== undefined) span.fail(failed);
      span.end();
    }
    return failed;
  }

  private async publishRow(row: Row, options: Record<string, unknown>): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.options.publishTimeoutMs ?? 30_000;
    try {
      await Promise.race([
        this.options.publisher.publish(row.exchange, row.routing_key, row.payload, options),
        new Promise((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no confirm within ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
      return undefined;
    } catch (err) {
      return (err as Error).message || String(err);
    } finally {
      clearTimeout(timer);
    }
  }
}
