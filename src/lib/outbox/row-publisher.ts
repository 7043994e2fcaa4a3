/**
 * Publishing a batch's rows: each with `mandatory`, messageId = the row's id and the row's W3C
 * trace context (a new trace for a row without one; a `relay` span of it when spans are recorded),
 * the batch bounded by a confirm timeout. Rows for an exchange that does not exist are held back before
 * anything is published (a publish to it would close the channel under the other rows in flight).
 */
import type { BatchMessage, BatchSettle } from '../publish';
import { messagingAttributes, newTraceparent, setTrace, spanName, traceOf, type MessageSpan, type MessageTracer } from '../trace';
import type { Row } from './batch';

/** Publishes one event; resolves once the broker confirmed it and did not return it. */
export interface EventPublisher {
  publish(exchange: string, routingKey: string, content: Buffer, options: BatchMessage['options']): Promise<void>;
  /**
   * Whether an exchange exists (a passive check on a channel of its own). A publish to a missing one
   * closes the publishing channel with a 404, failing the other rows in flight with it, which would
   * then go out twice: rows for a missing exchange are held back before anything is published.
   */
  exchangeExists?(exchange: string): Promise<boolean>;
  /**
   * Publishes `n` events in one synchronous run (`message(i)` gives each, read during that call only),
   * each one's outcome told to `settle` once: the relay's path when the publisher has it (no promise
   * per event).
   */
  publishBatch?(n: number, message: (i: number) => BatchMessage, settle: BatchSettle): void;
}

const EMPTY = Buffer.alloc(0);

/** How long an exchange seen to exist is not checked again. */
const EXCHANGE_SEEN_MS = 30_000;

export class RowPublisher {
  /** Exchanges seen to exist, and when. */
  private readonly exchangesSeen = new Map<string, number>();

  constructor(
    private readonly publisher: EventPublisher,
    private readonly timeoutMs: number,
    private readonly tracer: MessageTracer | undefined,
  ) {}

  /**
   * Hands every row of a batch to the publisher (once the exchanges are known to exist) and resolves,
   * once every row has its outcome, with each row's: undefined when confirmed, else why not. Never
   * rejects. One confirm timeout and one promise for the batch: no promise, race or async frame per
   * row (they cost CPU per event).
   */
  async publishAll(rows: readonly Row[]): Promise<Array<string | undefined>> {
    const missing = await this.missingExchanges(rows);
    const n = rows.length;
    const outcomes = new Array<string | undefined>(n).fill(undefined);
    if (n === 0) return outcomes;
    const settled = new Uint8Array(n);
    const spans: Array<MessageSpan | undefined> | undefined = this.tracer === undefined ? undefined : new Array<MessageSpan | undefined>(n);
    return new Promise((resolve) => {
      let left = n;
      const settle = (i: number, error: string | undefined): void => {
        if (settled[i] === 1) return;
        settled[i] = 1;
        outcomes[i] = error;
        const span = spans?.[i];
        if (span !== undefined) {
          if (error !== undefined) span.fail(error);
          span.end();
        }
        left -= 1;
        if (left === 0) {
          clearTimeout(timer);
          resolve(outcomes);
        }
      };
      const timer = setTimeout(() => {
        const late = `no confirm within ${this.timeoutMs / 1000} s`;
        for (let i = 0; i < n; i++) settle(i, late);
      }, this.timeoutMs);
      const batch = this.publisher.publishBatch?.bind(this.publisher);
      rows.forEach((row, i) => {
        if (missing.has(row.exchange)) settle(i, `exchange '${row.exchange}' does not exist (404 NOT_FOUND): not published`);
        else if (batch === undefined) this.publish(row, i, settle, spans);
      });
      if (batch === undefined) return;
      // The rows to publish: all of them, unless an exchange is missing.
      const picked = missing.size === 0 ? undefined : rows.flatMap((row, i) => (missing.has(row.exchange) ? [] : [i]));
      const at = (j: number): number => (picked === undefined ? j : (picked[j] ?? -1));
      const into: BatchMessage = { exchange: '', routingKey: '', content: EMPTY, options: {} };
      batch(
        picked === undefined ? n : picked.length,
        (j) => this.message(rows[at(j)] as Row, at(j), into, spans),
        (j, err) => settle(at(j), err === undefined ? undefined : errorText(err)),
      );
    });
  }

  /**
   * Row `i` as a publish, on `into` (a batch reuses it from row to row: the publisher reads it during
   * the call only): its headers with the trace context, its span started (into `spans`), its options.
   */
  private message(row: Row, i: number, into: BatchMessage, spans: Array<MessageSpan | undefined> | undefined): BatchMessage {
    const headers = Object.assign({}, row.headers);
    const trace = traceOf(headers) ?? { traceparent: newTraceparent() };
    const span = this.tracer?.start(spanName('relay', row.exchange), 'producer', messagingAttributes('relay', row.exchange, row.routing_key, { properties: { messageId: row.id, correlationId: row.properties?.correlationId }, content: row.payload }), trace);
    if (spans !== undefined) spans[i] = span;
    setTrace(headers, span?.trace ?? trace);
    into.exchange = row.exchange;
    into.routingKey = row.routing_key;
    into.content = row.payload;
    into.options = Object.assign({}, row.properties, { headers, messageId: row.id, mandatory: true });
    return into;
  }

  /** The batch's exchanges that do not exist (checked at most every 30 s while they do). */
  private async missingExchanges(rows: readonly Row[]): Promise<Set<string>> {
    const missing = new Set<string>();
    const check = this.publisher.exchangeExists?.bind(this.publisher);
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

  /** Publishes one row (a publisher without publishBatch); its outcome goes to `settle` (the span, when recorded, into `spans`). */
  private publish(row: Row, i: number, settle: (i: number, error: string | undefined) => void, spans: Array<MessageSpan | undefined> | undefined): void {
    const { options } = this.message(row, i, { exchange: row.exchange, routingKey: row.routing_key, content: row.payload, options: {} }, spans);
    let sent: Promise<void>;
    try {
      sent = this.publisher.publish(row.exchange, row.routing_key, row.payload, options);
    } catch (err) {
      settle(i, errorText(err));
      return;
    }
    sent.then(
      () => settle(i, undefined),
      (err: unknown) => settle(i, errorText(err)),
    );
  }
}

/** Why a publish failed, as a row's `last_error` says it. */
function errorText(err: unknown): string {
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && message !== '' ? message : String(err);
}
