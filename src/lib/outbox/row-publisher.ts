/**
 * Publishing a batch's rows: each with `mandatory`, messageId = the row's id and the row's W3C
 * trace context (a new trace for a row without one; a `relay` span of it when spans are recorded),
 * the batch bounded by a confirm timeout. Rows for an exchange that does not exist are held back before
 * anything is published (a publish to it would close the channel under the other rows in flight).
 */
import { messagingAttributes, newTraceparent, setTrace, spanName, traceOf, type MessageTracer } from '../trace';
import type { Row } from './batch';

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

export class RowPublisher {
  /** Exchanges seen to exist, and when. */
  private readonly exchangesSeen = new Map<string, number>();

  constructor(
    private readonly publisher: EventPublisher,
    private readonly timeoutMs: number,
    private readonly tracer: MessageTracer | undefined,
  ) {}

  /**
   * Hands every row of a batch to the publisher (once the exchanges are known to exist) and resolves
   * with each row's outcome to come: undefined when confirmed, else why not. Never rejects.
   */
  async publishAll(rows: readonly Row[]): Promise<Array<Promise<string | undefined>>> {
    const missing = await this.missingExchanges(rows);
    // One confirm timeout for the batch, not a timer per row.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no confirm within ${this.timeoutMs / 1000} s`), this.timeoutMs);
    });
    const outcomes = rows.map((row) => (missing.has(row.exchange) ? Promise.resolve(`exchange '${row.exchange}' does not exist (404 NOT_FOUND): not published`) : this.publish(row, deadline)));
    void Promise.all(outcomes).then(() => clearTimeout(timer));
    return outcomes;
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

  private async publish(row: Row, deadline: Promise<string>): Promise<string | undefined> {
    const headers = Object.assign({}, row.headers);
    const trace = traceOf(headers) ?? { traceparent: newTraceparent() };
    const span = this.tracer?.start(spanName('relay', row.exchange), 'producer', messagingAttributes('relay', row.exchange, row.routing_key, { properties: { messageId: row.id, correlationId: row.properties?.correlationId }, content: row.payload }), trace);
    setTrace(headers, span?.trace ?? trace);
    const options = { ...(row.properties ?? {}), headers, messageId: row.id, mandatory: true };
    let sent: Promise<void>;
    try {
      sent = this.publisher.publish(row.exchange, row.routing_key, row.payload, options);
    } catch (err) {
      sent = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const confirmed = sent.then(
      () => undefined,
      (err: unknown) => (err as Error).message || String(err),
    );
    const failed = await Promise.race([confirmed, deadline]);
    if (span !== undefined) {
      if (failed !== undefined) span.fail(failed);
      span.end();
    }
    return failed;
  }
}
