/**
 * Publishing under back-pressure. While the broker blocks the connection (a memory or disk alarm), a
 * channel's write buffer is full (amqplib's publish() returned false) or the connection is being
 * re-established, publishes wait here — in order, bounded by a message count and a byte size —
 * instead of growing amqplib's buffers without limit. Past the bound a publish fails at once.
 * Each waiting publish is handed to a channel exactly once: the buffer never sends a message twice.
 */
import { EventEmitter } from 'node:events';
import type { Options } from 'amqplib';
import { PublishError, type BatchMessage, type BatchSettle, type ConfirmPublisher } from './confirm-publisher';
import { DEFAULT_PUBLISH_LIMITS, type PublishLimits } from './limits';

export { DEFAULT_PUBLISH_LIMITS, type PublishLimits };

export interface PublishBufferState {
  /** The broker's reason (`connection.blocked`) while it blocks publishing. */
  blockedBy?: string;
  /** Publishes waiting to be sent. */
  messages: number;
  bytes: number;
  limits: PublishLimits;
}

export interface PublishRequest {
  /** Which confirm channel: one per purpose, so one node's channel error cannot fail another's publish. */
  purpose: string;
  exchange: string;
  routingKey: string;
  content: Buffer;
  options: Options.Publish;
  /**
   * Keeps waiting when the connection is lost: a producer's msg. Not the copy of a delivery (retry,
   * park, replay): when the connection goes, the broker redelivers the original, so a late copy would
   * be a duplicate. (A publish made while there is no connection waits for the next one either way.)
   */
  survivesReconnect: boolean;
  /**
   * A copy of a message the broker still holds unacked (a consumer's retry or park copy): it waits
   * past the bound rather than fail. Its body is in memory already and the consumers' prefetch bounds
   * how many there are; a refusal would only send the original back to its queue at the same attempt
   * (issue 52, item 3: thirty consumers' copies behind a slow socket filled the bound, and a forged
   * `x-death` came back at attempt 1 instead of being parked).
   */
  heldByBroker?: boolean;
}

interface Waiting extends PublishRequest {
  resolve: () => void;
  reject: (err: Error) => void;
}

/** What the buffer needs of a confirm publisher. */
export type SendTarget = Pick<ConfirmPublisher, 'send' | 'sendBatch' | 'whenWritable'>;

/** The live connection's confirm publishers, as the buffer needs them. */
export interface PublisherSource {
  /** The publisher of a purpose when it is open now, else undefined. */
  ready(purpose: string): SendTarget | undefined;
  /** Opens the publisher of a purpose on the live connection; rejects when there is none. */
  open(purpose: string): Promise<SendTarget>;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export class PublishBuffer extends EventEmitter<{ change: [] }> {
  private readonly waiting: Waiting[] = [];
  private bytes = 0;
  private connected = false;
  private blockedBy: string | undefined;
  /** A channel's write buffer is full: nothing more is handed over until it drains. */
  private draining = false;
  private pumping = false;

  constructor(
    private readonly source: PublisherSource,
    private readonly limits: PublishLimits = DEFAULT_PUBLISH_LIMITS,
  ) {
    super();
    // Every consumer and the broker node of the connection follow its changes: dozens are normal, not a leak.
    this.setMaxListeners(0);
  }

  get state(): PublishBufferState {
    const state: PublishBufferState = { messages: this.waiting.length, bytes: this.bytes, limits: this.limits };
    if (this.blockedBy !== undefined) state.blockedBy = this.blockedBy;
    return state;
  }

  private get open(): boolean {
    return this.connected && this.blockedBy === undefined && !this.draining;
  }

  /** Resolves once the broker confirmed the message (see ConfirmPublisher.publish); rejects otherwise. */
  publish(request: PublishRequest): Promise<void> {
    if (this.open && this.waiting.length === 0) {
      // The hot path: nothing waits, so nothing can be overtaken.
      const publisher = this.source.ready(request.purpose);
      if (publisher) return this.hand(publisher, request);
    }
    const { maxMessages, maxBytes } = this.limits;
    // The bound limits what waits: a message larger than it waits alone rather than never going out.
    if (request.heldByBroker !== true && (this.waiting.length >= maxMessages || (this.waiting.length > 0 && this.bytes + request.content.length > maxBytes))) {
      const size = `${this.waiting.length}/${maxMessages} messages, ${mib(this.bytes)} of ${mib(maxBytes)}`;
      const big = request.content.length > maxBytes / 2 ? ` (this message alone is ${mib(request.content.length)}: raise the broker node's publish buffer (MiB) for messages this large)` : '';
      return Promise.reject(new PublishError(`publish buffer full (${size}) while ${this.waitingFor()}: this message was not published${big}`, 'buffer-full'));
    }
    return new Promise<void>((resolve, reject) => {
      this.waiting.push(Object.assign({}, request, { resolve, reject }));
      this.bytes += request.content.length;
      this.emit('change');
      void this.pump();
    });
  }

  /**
   * Publishes `n` messages of one purpose, each one's outcome told to `settle` (see
   * ConfirmPublisher.sendBatch). When nothing waits and the channel is open, the batch goes to it in
   * one synchronous run (the run is not cut short when the write buffer fills: a batch is bounded;
   * what comes after it waits for the drain); otherwise each message waits here as a publish would,
   * with copies of its options and headers (`message(i)` may reuse its objects).
   */
  publishBatch(purpose: string, n: number, message: (i: number) => BatchMessage, settle: BatchSettle, survivesReconnect: boolean): void {
    if (this.open && this.waiting.length === 0) {
      const publisher = this.source.ready(purpose);
      if (publisher) {
        if (!publisher.sendBatch(n, message, settle)) this.drainOf(publisher);
        return;
      }
    }
    for (let i = 0; i < n; i++) {
      const { exchange, routingKey, content, options } = message(i);
      const headers = options.headers as Record<string, unknown> | undefined | null;
      const copied = Object.assign({}, options, headers !== null && typeof headers === 'object' ? { headers: Object.assign({}, headers) } : {});
      this.publish({ purpose, exchange, routingKey, content, options: copied, survivesReconnect }).then(
        () => settle(i, undefined),
        (err: unknown) => settle(i, err instanceof PublishError ? err : new PublishError(String((err as Error | undefined)?.message ?? err), 'channel-closed')),
      );
    }
  }

  setConnected(connected: boolean): void {
    this.connected = connected;
    if (connected) {
      void this.pump();
      return;
    }
    this.blockedBy = undefined;
    this.draining = false;
    this.rejectWhere((w) => !w.survivesReconnect, 'the connection to the broker was lost before it was sent; the broker redelivers the original');
  }

  setBlocked(reason: string | undefined): void {
    this.blockedBy = reason;
    this.emit('change');
    void this.pump();
  }

  /** Fails what waits for one purpose (its node stops). */
  rejectPurpose(purpose: string, why: string): void {
    this.rejectWhere((w) => w.purpose === purpose, why);
  }

  rejectAll(why: string): void {
    this.connected = false;
    this.rejectWhere(() => true, why);
  }

  private waitingFor(): string {
    if (this.blockedBy !== undefined) return `the broker blocks publishing (${this.blockedBy})`;
    if (!this.connected) return 'waiting for the connection to the broker';
    return 'waiting for the connection to send what it has';
  }

  private rejectWhere(match: (w: Waiting) => boolean, why: string): void {
    const removed = this.waiting.filter(match);
    if (removed.length === 0) return;
    const kept = this.waiting.filter((w) => !match(w));
    this.waiting.splice(0, this.waiting.length, ...kept);
    this.bytes = kept.reduce((sum, w) => sum + w.content.length, 0);
    for (const w of removed) w.reject(new PublishError(`not published: ${why}`, 'channel-closed'));
    this.emit('change');
  }

  private hand(publisher: SendTarget, request: PublishRequest): Promise<void> {
    const { written, confirmed } = publisher.send(request.exchange, request.routingKey, request.content, request.options);
    if (!written) this.drainOf(publisher);
    return confirmed;
  }

  /** A channel's write buffer is full: nothing more is handed over until it drains. */
  private drainOf(publisher: SendTarget): void {
    this.draining = true;
    void publisher.whenWritable().then(() => {
      this.draining = false;
      void this.pump();
    });
  }

  /** Sends what waits, oldest first, while the connection takes it. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let head = this.waiting[0]; this.open && head; head = this.waiting[0]) {
        let publisher = this.source.ready(head.purpose);
        if (!publisher) {
          try {
            publisher = await this.source.open(head.purpose);
          } catch (err) {
            if (!this.connected) break; // the next connection pumps again
            // The connection lives, but this purpose gets no channel: this publish fails, the rest go on.
            if (this.waiting[0] === head) {
              this.shift();
              head.reject(err instanceof Error ? err : new Error(String(err)));
            }
            continue;
          }
          // Blocked, disconnected or dropped while the channel opened: the loop looks again.
          if (!this.open || this.waiting[0] !== head) continue;
        }
        this.shift();
        this.hand(publisher, head).then(head.resolve, head.reject);
      }
    } finally {
      this.pumping = false;
    }
    this.emit('change');
  }

  private shift(): void {
    const head = this.waiting.shift();
    if (head) this.bytes -= head.content.length;
  }
}
