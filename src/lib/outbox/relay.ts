/**
 * The outbox relay: publishes pending rows with confirms and `mandatory`, marks them sent in the
 * transaction that claimed them, and retries failed ones with a capped backoff until they are
 * `failed` (the outbox's parking). Several relays share one table: a batch is claimed with
 * `FOR UPDATE SKIP LOCKED`. It wakes on NOTIFY (a write just committed) and polls as well; sent rows
 * are deleted after the retention, or at once (`deleteSent`: in the transaction that confirmed
 * them). With `ordered`, rows of one order key go out one at a time, in the order they were written
 * (a row waits while an earlier one of its key is pending).
 *
 * Pipelined: the next batch is claimed and published while earlier batches wait for their confirms,
 * up to `inFlight` batches, each in its own transaction (its own connection of the pool); batches
 * are marked and committed in the order they were claimed (window.ts).
 */
import { EventEmitter } from 'node:events';
import type { Queryable, TableName } from '../postgres';
import type { MessageTracer } from '../trace';
import { batchOutcome, claimOpening, decodeClaimed, markFailures, markSentSql, type BatchOutcome, type Row } from './batch';
import { RowPublisher, type EventPublisher } from './row-publisher';
import { BatchWindow } from './window';
import type { Transactional } from './write';

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
  /** A confirmed row is deleted (in the transaction that claimed it) instead of marked sent; default false. */
  deleteSent?: boolean;
  /** Per-key order (`order_key`), at the cost of concurrency. */
  ordered?: boolean;
  /** Batches claimed and published while earlier ones wait for their confirms; default 3. Each holds a connection of the pool. */
  inFlight?: number;
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

export class OutboxRelay extends EventEmitter<RelayEvents> {
  readonly stats: RelayStats = { sent: 0, retried: 0, failed: 0 };
  private running = false;
  private again = false;
  /** Set while the drain waits for its batches in flight: a wake goes on claiming at once. */
  private woken: (() => void) | undefined;
  private stopped = true;
  private paused = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private erring = false;
  private readonly t: string;
  /** BEGIN and the claim, one round trip. */
  private readonly opening: string;
  private readonly rows: RowPublisher;

  constructor(private readonly options: RelayOptions) {
    super();
    this.t = options.table.sql;
    this.opening = claimOpening(this.t, options.ordered === true, options.batchSize ?? 100);
    this.rows = new RowPublisher(options.publisher, options.publishTimeoutMs ?? 30_000, options.tracer);
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
      this.woken?.();
      return;
    }
    void this.drain();
  }

  /** Stops: no new claim; resolves when the batches in flight are done. */
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

  /**
   * Claims batches while there are rows, up to `inFlight` of them waiting for their confirms at a
   * time; once a claim comes back short, waits for the batches in flight or a wake, whichever first.
   * Resolves when every batch it started is done. A failed claim or mark ends it (the poll tries again).
   */
  private async drain(): Promise<void> {
    this.running = true;
    clearTimeout(this.pollTimer);
    const batchSize = this.options.batchSize ?? 100;
    const window = new BatchWindow(this.options.inFlight ?? 3);
    const failed: { error?: unknown } = {};
    try {
      for (;;) {
        await window.room();
        if (this.stopped || this.paused || failed.error !== undefined) break;
        this.again = false;
        const claimed = await this.startBatch(window, failed);
        if (claimed >= batchSize || this.again) continue;
        await Promise.race([
          window.idle(),
          new Promise<void>((resolve) => {
            this.woken = resolve;
          }),
        ]);
        this.woken = undefined;
        if (!this.again) break;
      }
    } catch (err) {
      failed.error ??= err;
    }
    await window.idle();
    this.running = false;
    if (failed.error !== undefined && !this.erring) {
      this.erring = true;
      this.emit('error', `outbox relay on ${this.t}: ${(failed.error as Error).message}`);
    }
    if (failed.error === undefined && this.again && !this.stopped && !this.paused) this.wake();
    else this.schedulePoll();
  }

  private schedulePoll(): void {
    if (this.stopped || this.paused) return;
    clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => this.wake(), this.options.pollMs ?? 5000);
    this.pollTimer.unref?.();
  }

  /**
   * One batch, in a transaction of its own: claimed (the returned promise resolves then, with how many
   * rows) and handed to the publisher, then — in the background, in the window — its confirms
   * awaited, its failed rows marked, and, on its turn, its sent rows marked and committed. Three
   * round trips when every row is confirmed: BEGIN with the claim, the confirms, the mark with the COMMIT.
   */
  private startBatch(window: BatchWindow, failed: { error?: unknown }): Promise<number> {
    const { maxAttempts = 10, backoff = { initialMs: 1000, maxMs: 300_000 } } = this.options;
    const slot = window.slot();
    let handed!: (claimed: number) => void;
    let refused!: (err: unknown) => void;
    const claimed = new Promise<number>((resolve, reject) => {
      handed = resolve;
      refused = reject;
    });
    this.options.db
      .transaction(
        async (client, opened): Promise<BatchOutcome | undefined> => {
          const rows = decodeClaimed(opened.rows as Array<Omit<Row, 'payload'> & { payload: Buffer | string }>);
          if (rows.length === 0) {
            handed(0);
            return undefined;
          }
          // Handed over before the publishes go out: the next claim's round trip overlaps them.
          handed(rows.length);
          const outcome = batchOutcome(rows, await this.rows.publishAll(rows), maxAttempts, backoff);
          await markFailures(client, this.t, outcome.failures);
          // Committed (its marks seen) only after every batch claimed before it: sent in claim order.
          await slot.turn();
          return outcome;
        },
        // The claim in the BEGIN's round trip, the sent rows' mark in the COMMIT's.
        { begin: this.opening, end: (outcome) => (outcome === undefined ? undefined : markSentSql(this.t, outcome.sent, this.options.deleteSent !== true)) },
      )
      .then((outcome) => this.told(outcome))
      .catch((err: unknown) => {
        failed.error ??= err;
        refused(err);
      })
      .finally(() => slot.close());
    return claimed;
  }

  /** Counted and told once the batch has committed (undefined: it claimed nothing), so that a look at the table sees it. */
  private told(outcome: BatchOutcome | undefined): void {
    if (this.erring) {
      this.erring = false;
      this.emit('recovered');
    }
    if (outcome === undefined) return;
    const { sent, failures } = outcome;
    this.stats.sent += sent.length;
    if (sent.length > 0) this.emit('sent', sent.length);
    for (const f of failures) {
      if (f.final) this.stats.failed += 1;
      else this.stats.retried += 1;
      this.emit('failure', { id: f.row.id, error: f.error, final: f.final, attempts: f.row.attempts + 1 });
    }
    // Ordered: a key's next row can be claimed now that this one is marked.
    if (this.options.ordered === true && sent.length > 0) this.wake();
  }
}
