/**
 * A consumer session's channel and what lives on it: its acks (an AckBatcher per channel, so a
 * delivery of a lost channel is never settled on the next, dead-lettering in the frame the main queue's
 * type and the broker's version call for), the consumer tag while a consumer runs on it, and the
 * prefetch set on it (basic.qos applies to the consumers started after it). One per session, which
 * owns it and decides when to take, consume, cancel, let go of and close a channel.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import { closeChannel } from '../amqp';
import { AckBatcher } from '../settle';
import { deadLetterFrame, type QueueArguments } from '../topology';

export class ConsumerChannel {
  private current: Channel | undefined;
  private batcher: AckBatcher | undefined;
  private tag: string | undefined;
  private prefetchSet: number | undefined;

  get channel(): Channel | undefined {
    return this.current;
  }

  /** Settles on `channel`. */
  get acks(): AckBatcher | undefined {
    return this.batcher;
  }

  /** A consumer runs on the channel (it was not cancelled since it started). */
  get consuming(): boolean {
    return this.tag !== undefined;
  }

  /**
   * Takes a new channel: new acks on it, no prefetch set yet. `mainQueueArguments`: the consumed queue's,
   * whose type with the broker's version picks the frame the acks dead-letter with.
   */
  take(channel: Channel, mainQueueArguments: QueueArguments = {}): AckBatcher {
    this.current = channel;
    // The version its connection's server properties said (amqplib keeps them on the channel's connection).
    const version = (channel as Partial<Pick<Channel, 'connection'>>).connection?.serverProperties.version;
    this.batcher = new AckBatcher(channel, undefined, deadLetterFrame(mainQueueArguments, version));
    this.prefetchSet = undefined;
    return this.batcher;
  }

  /** Starts a consumer of `queue` on `channel` with `prefetch` (a basic.qos first when it changes the one set). */
  async consume(channel: Channel, queue: string, prefetch: number, onMessage: (message: ConsumeMessage | null) => void): Promise<void> {
    if (prefetch !== this.prefetchSet) {
      this.prefetchSet = prefetch;
      await channel.prefetch(prefetch);
    }
    this.tag = (await channel.consume(queue, onMessage, { noAck: false })).consumerTag;
  }

  /**
   * Cancels the consumer (basic.cancel), keeping the channel; a failed cancel is let be (the channel is
   * going). Undefined when no consumer ran on a channel.
   */
  cancel(): Promise<void> | undefined {
    const { current, tag } = this;
    this.tag = undefined;
    return current && tag ? current.cancel(tag).then(
      () => undefined,
      () => undefined,
    ) : undefined;
  }

  /** Forgets the consumer without a basic.cancel: the caller closes the channel next. */
  forgetConsumer(): void {
    this.tag = undefined;
  }

  /** Writes the acks given so far. */
  flush(): void {
    this.batcher?.flush();
  }

  /**
   * Hands what is still unsettled back to the queue with one `basic.nack` (see AckBatcher.handBack): a
   * stopping consumer's leftovers are not failures, and RabbitMQ 4.3+ then does not count them.
   */
  handBack(): number {
    return this.batcher?.handBack() ?? 0;
  }

  /** Lets go of a channel that is gone (closed, or its connection lost): nothing more is settled on it. */
  release(): void {
    this.batcher?.close();
    this.batcher = undefined;
    this.current = undefined;
    this.tag = undefined;
  }

  /** Lets go of the channel — its last acks written first — and closes it: the broker takes back what is unsettled. */
  async close(): Promise<void> {
    const channel = this.current;
    this.flush();
    this.release();
    if (channel) await closeChannel(channel);
  }
}
