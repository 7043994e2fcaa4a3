/**
 * Ordered mode's hold: a failed message stays at the head of the queue — unacked, so nothing behind
 * it is delivered (prefetch 1) — and goes through the flow again after a pause. It is never returned
 * to the broker, so a quorum queue's delivery limit cannot drop it. Says when processing is blocked
 * and when it flows again by events.
 */
import { EventEmitter } from 'node:events';
import type { ConsumeMessage } from 'amqplib';
import type { RetryInfo } from '../message';
import type { TrackedDelivery } from './settlement';

export interface OrderedHoldEvents {
  /** Processing is blocked: since when, at which attempt, and why. */
  blocked: [string];
  /** The held message was acked or parked (or let go of): processing goes on. */
  released: [];
}

export class OrderedHold extends EventEmitter<OrderedHoldEvents> {
  private held: { since: Date; attempt: number; content: Buffer; messageId: unknown } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pauseMs: number) {
    super();
  }

  /** Ordered mode has no attempt limit; a held message redelivered after a lost channel keeps its count. */
  retryOf(message: ConsumeMessage, retry: RetryInfo): RetryInfo {
    const held = this.held;
    const again = held !== undefined && held.content.equals(message.content) && held.messageId === (message.properties.messageId as unknown);
    return { ...retry, attempt: again ? held.attempt + 1 : 1, maxAttempts: 0, remaining: null };
  }

  /** Holds a failed delivery: after the pause, `again` runs it through the flow as the next attempt (not when its channel is gone). */
  hold(entry: TrackedDelivery, reason: string, again: (attempt: number) => void): void {
    const { attempt } = entry.retry;
    const since = this.held?.since ?? new Date();
    this.held = { since, attempt, content: entry.message.content, messageId: entry.message.properties.messageId as unknown };
    this.emit('blocked', `blocked since ${since.toISOString()}, attempt ${attempt}${reason ? `: ${reason}` : ''}`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!entry.acks.closed) again(attempt + 1);
    }, this.pauseMs);
    this.timer.unref?.();
  }

  /** Stops holding (the consumer pauses or stops): the held delivery is not run again; it goes back to the head of the queue with its channel. */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.release();
  }

  /** The held message was acked or parked: processing goes on. */
  release(): void {
    if (!this.held) return;
    this.held = undefined;
    this.emit('released');
  }
}
