/**
 * The rate limit: deliveries go to the flow at most `rate` a second (a token bucket, src/lib/degrade);
 * the ones beyond it wait here, unacked — so at most the prefetch of them, the rest stay at the broker.
 * A message held when the consumer stops taking messages goes back to the queue; one whose channel is
 * gone is forgotten (the broker has it again).
 */
import { performance } from 'node:perf_hooks';
import type { ConsumeMessage } from 'amqplib';
import { burstOf, TokenBucket } from '../degrade';

/** The longest timer Node.js keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface HeldDelivery {
  acks: { readonly closed: boolean; nack(message: ConsumeMessage, requeue: boolean): void };
  message: ConsumeMessage;
}

export class Throttle<T extends HeldDelivery> {
  private readonly bucket: TokenBucket;
  private readonly queue: T[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** @param release hands a delivery to the flow @param holding called when it starts holding deliveries back (none held before) */
  constructor(
    readonly rate: number,
    private readonly release: (item: T) => void,
    now: () => number = () => performance.now(),
    private readonly holding: () => void = () => undefined,
  ) {
    this.bucket = new TokenBucket(rate, burstOf(rate), now);
  }

  /** Deliveries held back now. */
  get held(): number {
    return this.queue.length;
  }

  /** A delivery: to the flow now if the rate allows, else in turn. */
  pass(item: T): void {
    const first = this.queue.length === 0;
    if (first && this.bucket.take()) return this.release(item);
    this.queue.push(item);
    this.arm();
    if (first) this.holding();
  }

  /** The consumer stops taking messages: the held ones go back to the queue (they were not processed). */
  requeue(): void {
    for (const { acks, message } of this.drop()) {
      if (acks.closed) continue;
      try {
        acks.nack(message, true);
      } catch {
        // The channel is gone meanwhile: the broker has it again.
      }
    }
  }

  /** Forgets the held deliveries (their channel is gone, or they are handed back) and returns them. */
  drop(): T[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.queue.splice(0);
  }

  private arm(): void {
    this.timer ??= setTimeout(() => this.flow(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(this.bucket.waitMs()))));
  }

  private flow(): void {
    this.timer = undefined;
    for (let next = this.queue[0]; next !== undefined; next = this.queue[0]) {
      if (!next.acks.closed && !this.bucket.take()) break;
      this.queue.shift();
      if (!next.acks.closed) this.release(next);
    }
    if (this.queue.length > 0) this.arm();
  }
}
