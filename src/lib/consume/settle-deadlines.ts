/**
 * The settle deadlines of a consumer's deliveries: one timer for the oldest delivery's deadline
 * instead of one per delivery (deliveries are registered in arrival order with the same timeout, so
 * the oldest live one is due first), and the deadlines of lost-channel deliveries whose keys are still
 * claimed (their {@link Orphans}). A delivery past its deadline is retried as a transient failure; a
 * lost-channel delivery past its deadline has its key released. Owned by its `Deliveries`.
 */
import { performance } from 'node:perf_hooks';
import { LogLimiter, messages } from '../observe';
import { SettleError, type SettleOutcome, type TrackedDelivery } from '../settle';
import { Orphans } from './orphans';
import type { DeliveryRegistry } from './registry';

/** What the deadlines do through their owner. */
export interface DeadlineHooks {
  /** Retries a delivery nobody settled in time (its owner's settle). */
  retry(id: string, reason: string): Promise<SettleOutcome>;
  /** Releases a deduplication key. */
  release(key: string): void;
  warning(text: string): void;
  error(text: string): void;
}

export class SettleDeadlines {
  private timer: NodeJS.Timeout | undefined;
  /** Deliveries whose channel was lost with the flow still on them: a late settle still completes or releases their key, their settle deadline releases it. */
  readonly orphans = new Orphans();
  /** A settle timeout is a warning per message, limited so a burst (an outage) cannot flood the log. */
  private readonly log: LogLimiter;

  constructor(
    private readonly registry: DeliveryRegistry<TrackedDelivery>,
    private readonly settleTimeoutMs: number,
    private readonly hooks: DeadlineHooks,
  ) {
    this.log = new LogLimiter(
      (text) => hooks.warning(text),
      (count, last, ms) => `${messages(count, 'more')} not settled in time in the last ${ms / 1000} s (the last: ${last})`,
    );
  }

  /** The deadline of a delivery handed to the flow now (Infinity without a settle timeout); the timer runs for it unless it already runs for an earlier one. */
  started(): number {
    if (this.settleTimeoutMs <= 0) return Infinity;
    const deadline = performance.now() + this.settleTimeoutMs;
    if (this.timer === undefined) this.arm(deadline);
    return deadline;
  }

  /** The live deliveries' deadlines no longer apply (their channel is gone); the orphans' may. */
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Remembers a lost-channel delivery's key until its deadline. */
  orphaned(id: string, key: string, deadline: number): void {
    this.orphans.add(id, key, deadline);
  }

  /**
   * The keys of deliveries whose channel is gone (`ended`): released when nothing will settle them any
   * more (`flowGone`: the consumer stopped, and the keys of earlier lost channels' deliveries go with
   * them), else remembered until their settle deadline (a late ack still records its key).
   */
  keysOfEnded(ended: readonly TrackedDelivery[], flowGone: boolean): void {
    // The connection may be gone with the channel: no key is released before it is back (`connectionBack`).
    if (!flowGone) this.orphans.suspend(performance.now());
    for (const entry of ended) {
      if (entry.dedupeKey === undefined) continue;
      if (flowGone) this.hooks.release(entry.dedupeKey);
      else this.orphaned(entry.id, entry.dedupeKey, entry.deadline);
    }
    if (flowGone) for (const orphan of this.orphans.expire(Infinity)) this.hooks.release(orphan.key);
    else this.watchOrphans();
  }

  /**
   * The consumer has a channel again: the lost channels' keys still claimed are released as much later
   * as it was gone (the flow's own broker steps may have waited for the connection).
   */
  connectionBack(): void {
    this.orphans.resume(performance.now());
    this.watchOrphans();
  }

  /** Waits for the earliest orphan's deadline (after {@link clear}). */
  watchOrphans(): void {
    if (this.timer === undefined && this.orphans.next !== Infinity) this.arm(this.orphans.next);
  }

  /** Writes the warnings held back so far. */
  flush(): void {
    this.log.flush();
  }

  private arm(at: number): void {
    this.timer = setTimeout(() => this.due(), Math.max(1, Math.ceil(at - performance.now())));
    this.timer.unref?.();
  }

  /**
   * Settles every delivery past its deadline (oldest first), releases the keys of lost-channel
   * deliveries past theirs, then waits for the next deadline of either.
   */
  private due(): void {
    this.timer = undefined;
    const now = performance.now();
    const due: string[] = [];
    let next = Infinity;
    for (const entry of this.registry.oldestFirst()) {
      if (entry.deadline > now) {
        next = entry.deadline;
        break;
      }
      due.push(entry.id);
    }
    for (const orphan of this.orphans.expire(now)) this.orphanTimedOut(orphan.id, orphan.key);
    next = Math.min(next, this.orphans.next);
    if (next !== Infinity) this.arm(next);
    for (const id of due) void this.timedOut(id);
  }

  /** A delivery whose channel was lost was not settled in time either: its key is released, so its copies are processed now, not after the claim's lease. */
  private orphanTimedOut(id: string, key: string): void {
    this.hooks.release(key);
    this.log.say(`message ${id} was not settled within ${this.settleTimeoutMs / 1000} s (its channel was lost before): its deduplication key is released`);
  }

  private async timedOut(id: string): Promise<void> {
    const seconds = this.settleTimeoutMs / 1000;
    try {
      const outcome = await this.hooks.retry(id, `not settled within ${seconds} s`);
      this.log.say(`message ${id} was not settled within ${seconds} s: ${outcome.done === 'parked' ? 'parked (attempts exhausted)' : 'sent to retry'}`);
    } catch (err) {
      this.retryFailed(id, seconds, err);
    }
  }

  /**
   * The settle timeout's retry did not happen. Settled in the meantime: the flow's settle said so.
   * Anything else returned the message without settling it (a failed copy, a channel gone), which is
   * said with its cause: it comes back at the same attempt (issue 52, item 3: a forged `x-death`
   * whose park copy failed here came back at attempt 1 without a word).
   */
  private retryFailed(id: string, seconds: number, err: unknown): void {
    if (err instanceof SettleError && err.kind === 'already-settled') return;
    const text = `message ${id} was not settled within ${seconds} s, and its retry did not happen: ${err instanceof Error ? err.message : String(err)}`;
    if (err instanceof SettleError && err.kind !== 'broker') this.hooks.warning(text);
    else this.hooks.error(text);
  }
}
