/**
 * The settles of deduplicated deliveries that wait on the store: an ack goes to the broker only once
 * its key is recorded as processed ("effect done, ack lost" is covered; it waits while the store is
 * down), and a delivery whose channel was lost with the flow on it still has its key completed (an
 * ack) or released (unless its deadline released it). A duplicate of a processed key is acked without
 * entering the flow.
 */
import type { ErrorKind } from '../classify';
import type { DedupeGate } from '../dedupe';
import type { SettleAction, SettleOutcome, TrackedDelivery } from '../settle';
import type { Orphans } from './orphans';

export interface KeyedSettleHooks {
  /** The ack itself (to the broker, counted): what it comes to, or it throws. */
  ack(entry: TrackedDelivery, action: SettleAction, reason: string, kind: ErrorKind | undefined): SettleOutcome;
  /** Counts and reports a duplicate acked. */
  duplicate(entry: TrackedDelivery): void;
}

export class KeyedSettles {
  /** Acks waiting for their key to be recorded. */
  completing = 0;

  constructor(
    readonly gate: DedupeGate,
    private readonly orphans: Orphans,
    private readonly hooks: KeyedSettleHooks,
  ) {}

  /** Records the delivery's key, then acks it; the promise has the ack's outcome, or rejects with what it threw. */
  ackWhenRecorded(entry: TrackedDelivery, key: string, action: SettleAction, reason: string, kind: ErrorKind | undefined): Promise<SettleOutcome> {
    this.completing += 1;
    return new Promise((resolve, reject) => {
      // Called from inside the gate: whatever the ack comes to goes to the promise, nothing is thrown there.
      this.gate.completeThen(key, () => {
        this.completing -= 1;
        try {
          resolve(this.hooks.ack(entry, action, reason, kind));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }

  /** A duplicate of a processed key: acked without entering the flow, counted and reported. */
  duplicate(entry: TrackedDelivery): void {
    try {
      entry.acks.ack(entry.message);
    } catch {
      return; // channel gone: redelivered, and found a duplicate again
    }
    this.hooks.duplicate(entry);
  }

  /** A settle of a delivery that is no longer live: its key is recorded (an ack) or released, if its channel was lost with the flow on it. */
  orphan(id: string, action: string): void {
    const orphan = this.orphans.settle(id, action);
    if (!orphan) return;
    if (orphan.then === 'complete') void this.gate.complete(orphan.key);
    else this.gate.release(orphan.key);
  }
}
