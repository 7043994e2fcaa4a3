/**
 * Coalesces the acks of one consumer channel into multiple-acks.
 *
 * Why: each `channel.ack` is one AMQP frame, one socket write and one frame the broker processes.
 * With a prefetch of 100 a flow settles its msgs one Node-RED hop apart, each in its own
 * `setImmediate`, so the acks of one event-loop turn are collected and written after it as one
 * `basic.ack` with `multiple` set, up to the highest tag below every delivery still unsettled, and
 * one plain ack for each acked delivery above it. A multiple-ack never covers a delivery this
 * batcher has seen arrive and not yet seen settled; deliveries are registered on arrival, before
 * the flow can settle them, so that holds for every delivery of the channel.
 *
 * When no other delivery is in flight (prefetch 1, or the last of a burst) the acks go out at once:
 * waiting would add a turn of latency and save nothing. Otherwise an ack is written at the end of
 * the turn; if the channel closes in between, the broker redelivers those messages (as it does for
 * an ack lost with its socket). `flush()` before closing the channel on purpose (a closing connection
then waits two turns, so amqplib, which writes on setImmediate, puts them on the socket first).
 */
import type { Channel, Message } from 'amqplib';

/** The part of an amqplib channel the batcher uses. */
export type AckChannel = Pick<Channel, 'ack' | 'nack'>;

/** Defers a flush to the end of the event-loop turn; injectable for unit tests. */
export type Scheduler = (flush: () => void) => void;

const endOfTurn: Scheduler = (flush) => {
  setImmediate(flush);
};

export class AckBatcher {
  /** Delivery tags that arrived and were not settled through this batcher yet. */
  private readonly unsettled = new Set<number>();
  /** Acked, not yet written, by tag. */
  private pending = new Map<number, Message>();
  private scheduled = false;
  private closed = false;

  constructor(
    readonly channel: AckChannel,
    private readonly schedule: Scheduler = endOfTurn,
  ) {}

  /** A delivery arrived (call before the flow sees it). */
  arrived(message: Message): void {
    this.unsettled.add(message.fields.deliveryTag);
  }

  /** Acks at the end of this turn. Throws when the channel is known to be gone. */
  ack(message: Message): void {
    if (this.closed) throw new Error('Channel closed');
    const tag = message.fields.deliveryTag;
    this.unsettled.delete(tag);
    this.pending.set(tag, message);
    if (this.unsettled.size === 0) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
  }

  /** Nacks at once (a nack is never batched: its order against later acks does not matter). */
  nack(message: Message, requeue: boolean): void {
    if (this.closed) throw new Error('Channel closed');
    this.unsettled.delete(message.fields.deliveryTag);
    this.channel.nack(message, false, requeue);
  }

  /**
   * Writes the pending acks: one multiple-ack for those below every unsettled delivery, plain acks
   * above. Says whether it wrote any.
   */
  flush(): boolean {
    this.scheduled = false;
    if (this.closed || this.pending.size === 0) return false;
    const pending = this.pending;
    this.pending = new Map();
    let lowestUnsettled = Infinity;
    for (const tag of this.unsettled) if (tag < lowestUnsettled) lowestUnsettled = tag;
    let below: Message | undefined;
    const above: Message[] = [];
    for (const [tag, message] of pending) {
      if (tag > lowestUnsettled) above.push(message);
      else if (!below || tag > below.fields.deliveryTag) below = message;
    }
    try {
      if (below) this.channel.ack(below, true);
      for (const message of above) this.channel.ack(message, false);
      return true;
    } catch {
      // The channel closed under us: the broker redelivers what these acks would have settled.
      this.close();
      return false;
    }
  }

  /** The channel is gone: pending acks are dropped, later settles throw. */
  close(): void {
    this.closed = true;
    this.pending.clear();
    this.unsettled.clear();
  }
}
