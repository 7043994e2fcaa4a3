/**
 * Ordered mode's hold: a failed message stays at the head of the queue — unacked, so nothing behind
 * it is delivered (prefetch 1) — and goes through the flow again after a pause. It is never returned
 * to the broker, so a quorum queue's delivery limit cannot drop it.
 */
import type { ConsumeMessage } from 'amqplib';
import type { RetryInfo } from '../message/attempts';
import type { TrackedDelivery } from './settlement';

export interface OrderedHoldHost {
  /** Whether the held delivery's channel is still the consumer's. */
  usable(entry: TrackedDelivery): boolean;
  /** Runs a held delivery through the flow again, as attempt `attempt`. */
  redeliver(entry: TrackedDelivery, attempt: number): void;
  /** Processing is blocked (with a text saying since when and why), or flows again (undefined). */
  blocked(detail: string | undefined): void;
}

export class OrderedHold {
  private held: { since: Date; attempt: number; content: Buffer; messageId: unknown } | undefined;
  /** The held delivery and the timer that runs it again. */
  private waiting: { entry: TrackedDelivery; timer: NodeJS.Timeout } | undefined;

  constructor(
    private readonly pauseMs: number,
    private readonly host: OrderedHoldHost,
  ) {}

  /** Ordered mode has no attempt limit; a held message redelivered after a lost channel keeps its count. */
  retryOf(message: ConsumeMessage, retry: RetryInfo): RetryInfo {
    const held = this.held;
    const again = held !== undefined && held.content.equals(message.content) && held.messageId === (message.properties.messageId as unknown);
    return { ...retry, attempt: again ? held.attempt + 1 : 1, maxAttempts: 0, remaining: null };
  }

  hold(entry: TrackedDelivery, reason: string): void {
    const { attempt } = entry.retry;
    const since = this.held?.since ?? new Date();
    this.held = { since, attempt, content: entry.message.content, messageId: entry.message.properties.messageId as unknown };
    this.host.blocked(`blocked since ${since.toISOString()}, attempt ${attempt}${reason ? `: ${reason}` : ''}`);
    const timer = setTimeout(() => {
      this.waiting = undefined;
      if (this.host.usable(entry)) this.host.redeliver(entry, attempt + 1);
    }, this.pauseMs);
    timer.unref?.();
    this.waiting = { entry, timer };
  }

  /**
   * Stops holding (the consumer is paused): the held delivery, if one waits for its next run, is
   * returned for the caller to hand back to the queue, where it stays first in line.
   */
  drop(): TrackedDelivery | undefined {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) clearTimeout(waiting.timer);
    this.release();
    return waiting?.entry;
  }

  /** The held message was acked or parked: processing goes on. */
  release(): void {
    if (!this.held) return;
    this.held = undefined;
    this.host.blocked(undefined);
  }
}
