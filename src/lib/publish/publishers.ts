/**
 * The confirm channels a broker connection publishes on, one per purpose (a node, parking, replay),
 * all fed through one back-pressure buffer: while the broker blocks the connection, a channel's
 * buffer is full or the connection is re-established, publishes wait there, bounded.
 */
import type { ChannelModel, Options } from 'amqplib';
import { ConfirmPublisher, PublishError, type BatchMessage, type BatchSettle } from './confirm-publisher';
import { PublishBuffer, type PublishLimits } from './publish-buffer';

export interface PublisherOptions {
  /**
   * Keep waiting through a reconnect: for a producer's msg. Not for the copy of a delivery (retry,
   * park, replay): when the connection goes, the broker redelivers the original instead.
   */
  survivesReconnect?: boolean;
  /** Runs before the channel's first publish on each connection (e.g. making sure a reply queue exists). */
  prepare?: () => Promise<void>;
  /** Copies of messages the broker still holds (a consumer's retry and park copies): never refused for the buffer's bound (see PublishRequest.heldByBroker). */
  heldByBroker?: boolean;
}

/** Publishes on one purpose's confirm channel, through the back-pressure buffer. */
export interface Publisher {
  /** Resolves once the broker confirmed the message and did not return it. */
  publish(exchange: string, routingKey: string, content: Buffer, options?: Options.Publish): Promise<void>;
  /** Publishes `n` messages, each one's outcome told to `settle` as {@link publish} would settle it (see PublishBuffer.publishBatch). */
  publishBatch(n: number, message: (i: number) => BatchMessage, settle: BatchSettle): void;
}

export class Publishers {
  private readonly created = new Map<string, Promise<ConfirmPublisher>>();
  /** The publishers of `created` that are open, for the buffer's synchronous hot path. */
  private readonly open = new Map<string, ConfirmPublisher>();
  private readonly preparations = new Map<string, () => Promise<void>>();
  private model: ChannelModel | undefined;
  readonly buffer: PublishBuffer;

  /** `unusedWhy` says why nothing can be published (no node uses the connection), else undefined. */
  constructor(
    private readonly unusedWhy: () => string | undefined,
    limits?: PublishLimits,
  ) {
    this.buffer = new PublishBuffer(
      {
        ready: (purpose) => this.current(purpose),
        open: (purpose) => this.confirmPublisher(purpose),
      },
      limits,
    );
  }

  publisher(purpose: string, options: PublisherOptions = {}): Publisher {
    const survivesReconnect = options.survivesReconnect === true;
    const heldByBroker = options.heldByBroker === true;
    if (options.prepare) this.preparations.set(purpose, options.prepare);
    return {
      publish: (exchange, routingKey, content, publishOptions = {}) => {
        const why = this.unusedWhy();
        if (why !== undefined) return Promise.reject(new Error(why));
        return this.buffer.publish({ purpose, exchange, routingKey, content, options: publishOptions, survivesReconnect, heldByBroker });
      },
      publishBatch: (n, message, settle) => {
        const why = this.unusedWhy();
        if (why === undefined) this.buffer.publishBatch(purpose, n, message, settle, survivesReconnect);
        else for (let i = 0; i < n; i++) settle(i, new PublishError(why, 'channel-closed'));
      },
    };
  }

  /** The open confirm channel of a purpose, if it has one now. */
  current(purpose: string): ConfirmPublisher | undefined {
    const publisher = this.open.get(purpose);
    return publisher && !publisher.closed ? publisher : undefined;
  }

  connected(model: ChannelModel): void {
    this.model = model;
    // amqplib emits a connection's error before it closes its channels: each publish they fail says it.
    model.on('error', (err: Error) => this.connectionGone(model, `its connection was lost (${err.message})`));
    model.on('blocked', (reason: string) => this.buffer.setBlocked(reason));
    model.on('unblocked', () => this.buffer.setBlocked(undefined));
    this.buffer.setConnected(true);
  }

  disconnected(): void {
    this.forget();
    this.buffer.setConnected(false);
  }

  /** The connection is closed for good (this client closes it): whatever waits fails. */
  closed(): void {
    if (this.model) this.connectionGone(this.model, 'this client closed the broker connection (its last node stopped)');
    this.forget();
    this.buffer.rejectAll('the broker connection was closed');
  }

  /** Closes the publisher of one purpose (a node that is going away); what it still had waiting fails. */
  async close(purpose: string): Promise<void> {
    this.buffer.rejectPurpose(purpose, 'the node stopped before the broker took it');
    const current = this.created.get(purpose);
    this.created.delete(purpose);
    this.open.delete(purpose);
    this.preparations.delete(purpose);
    const publisher = await current?.catch(() => undefined);
    await publisher?.close();
  }

  /** Tells the open publishers of `model` why their channels are about to close. */
  private connectionGone(model: ChannelModel, why: string): void {
    if (this.model === model) for (const publisher of this.open.values()) publisher.connectionGone(why);
  }

  private forget(): void {
    this.model = undefined;
    this.created.clear();
    this.open.clear();
  }

  /** The confirm channel of a purpose on the live connection, recreated when it was closed. */
  private async confirmPublisher(purpose: string): Promise<ConfirmPublisher> {
    const current = this.created.get(purpose);
    if (current) {
      const existing = await current.catch(() => undefined);
      if (existing && !existing.closed) return existing;
      // Only the first caller to find it closed replaces it; the others get the replacement.
      if (this.created.get(purpose) === current) this.created.delete(purpose);
    }
    let created = this.created.get(purpose);
    if (!created) {
      const model = this.model;
      if (!model) throw new Error('not connected to the broker');
      const prepare = this.preparations.get(purpose);
      created = (prepare ? prepare() : Promise.resolve())
        .then(() => model.createConfirmChannel())
        .then((channel) => {
          channel.on('error', () => undefined);
          const publisher = new ConfirmPublisher(channel);
          if (this.model === model) this.open.set(purpose, publisher);
          return publisher;
        });
      this.created.set(purpose, created);
    }
    return created;
  }
}
