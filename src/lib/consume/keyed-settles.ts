/**
 * The settles of deduplicated deliveries that wait on the store: an ack goes to the broker only once
 * its key is recorded as processed ("effect done, ack lost" is covered; it waits while the store is
 * down), and a delivery whose channel was lost with the flow on it still has its key completed (an
 * ack) or released (unless its deadline released it). A duplicate of a processed key is acked without
 * entering the flow.
 */
import type { ErrorKind } from '../classify';
import type { DedupeGate } from '../dedupe';
import type { SettleAction, SettleLater, SettleOutcome, TrackedDelivery } from '../settle';
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

  /**
   * Records the delivery's key, then acks it: `later` gets the ack's outcome, or what it threw. Called
   * from inside the gate once the store has the key (never before this returns: the caller found the
   * store does not answer at once). No promise per ack.
   */
  ackWhenRecorded(entry: TrackedDelivery, key: string, action: SettleAction, reason: string, kind: ErrorKind | undefined, later: SettleLater): undefined {
    this.completing += 1;
    this.gate.completeThen(key, () => {
      this.completing -= 1;
      let result: SettleOutcome | Error;
      try {
        result = this.hooks.ack(entry, action, reason, kind);
      } catch (err) {
        result = err instanceof Error ? err : new Error(String(err));
      }
      later(result, entry.id); // nothing is thrown into the gate
    });
    return undefined; // the outcome comes through `later`
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
