/**
 * Batch mode's collecting (issue 51): a consumer's deliveries gathered into batches of up to `size`,
 * the first of a batch waiting at most `waitMs` for the rest. A full batch goes at once; a partial one
 * when its wait runs out, or at once when the consumer stops taking messages (`flush`). A pending
 * batch whose channel is lost is dropped, never sent stale: `drop`, and at every send the items no
 * longer `live` (ended meanwhile: the broker has them again) are left out. Pure, with injected timers;
 * the consumer node builds one msg of each batch.
 */
import { realTimers, type Timers } from './timers';

/** The longest batch a consumer collects. */
export const MAX_BATCH_SIZE = 10_000;
/** RabbitMQ's largest prefetch (basic.qos counts up to 65535 unacked messages). */
const MAX_PREFETCH = 65_535;

export interface BatcherOptions<T> {
  /** Items per batch, at most (1..MAX_BATCH_SIZE). */
  size: number;
  /** Milliseconds from a batch's first item until it goes, full or not. */
  waitMs: number;
  /** Sends a batch (never empty). */
  send: (items: T[]) => void;
  /** Whether an item can still be settled; the others are left out of the batch they were in. Default: all. */
  live?: (item: T) => boolean;
  /** Arms and disarms the wait's timer. */
  timers?: Timers;
}

/** The prefetch of a consumer in batch mode: room for two batches (one in the flow, the next collecting), never less than the configured one, at most 65535. */
export function batchPrefetch(prefetch: number, size: number): number {
  return Math.min(MAX_PREFETCH, Math.max(prefetch, 2 * size));
}

export class Batcher<T> {
  private items: T[] = [];
  private timer: unknown;
  private readonly timers: Timers;

  constructor(private readonly options: BatcherOptions<T>) {
    if (!Number.isInteger(options.size) || options.size < 1 || options.size > MAX_BATCH_SIZE) throw new RangeError(`batch size must be an integer from 1 to ${MAX_BATCH_SIZE} (got ${options.size})`);
    this.timers = options.timers ?? realTimers;
  }

  /** Items collected for the next batch. */
  get pending(): number {
    return this.items.length;
  }

  /** One item: the batch goes once it is full; the first of a batch arms the wait. */
  add(item: T): void {
    const items = this.items;
    items.push(item);
    if (items.length >= this.options.size) return this.flush();
    if (items.length === 1) this.timer = this.timers.set(() => this.due(), this.options.waitMs);
  }

  /** Sends what is collected now (its live items), if anything. */
  flush(): void {
    const items = this.take();
    const live = this.options.live;
    const sent = live ? items.filter(live) : items;
    if (sent.length > 0) this.options.send(sent);
  }

  /** Forgets what is collected (their channel is gone: the broker has them again) and returns it. */
  drop(): T[] {
    return this.take();
  }

  private due(): void {
    this.timer = undefined;
    this.flush();
  }

  private take(): T[] {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    const items = this.items;
    this.items = [];
    return items;
  }
}
