/**
 * Deduplication on arrival: a delivery's key is found (its messageId, a msg property, an expression),
 * checked (missing, unusable, longer than the store takes) and passed through the gate. Says what
 * becomes of the delivery (at once, or through the one callback it is given); it settles nothing.
 */
import type { Admission as GateAdmission, DedupeGate, DedupeKeyResult } from '../dedupe';
import type { DeliveredMessage } from '../message';

export interface DeliveryDedupe {
  gate: DedupeGate;
  /** The key of a delivery, as the flow would see it (an expression may take a turn or more). */
  keyOf: (delivered: DeliveredMessage) => DedupeKeyResult | Promise<DedupeKeyResult>;
  /** A delivery without a key: processed without deduplication, or parked. */
  noKey: 'process' | 'park';
  /** The longest key the store takes (UTF-8 bytes, scope included). */
  maxKeyBytes: number;
  /** What the store keys are scoped by (counted into their length). */
  scope: string;
}

/** The park reason of a delivery without a key, with `noKey: 'park'`. */
export const NO_DEDUPE_KEY = 'no deduplication key';

export type Arrival =
  /** To the flow; `key`: claimed under it (none: no key, or the store is down and the policy says process). */
  | { kind: 'deliver'; key?: string }
  /** Processed before: ack it, do not process it. */
  | { kind: 'duplicate' }
  /** Park it; `error`: a configuration problem to report. */
  | { kind: 'park'; reason: string; error?: string }
  /** Let go of: its channel is gone, or the consumer stops (the broker has it again). */
  | { kind: 'gone' };

/** A delivery's channel: closed once it is gone (the broker has its deliveries again). */
type Channel = { readonly closed: boolean };

const GONE: Arrival = Object.freeze({ kind: 'gone' });
const DUPLICATE: Arrival = Object.freeze({ kind: 'duplicate' });

/** An admission that failed unexpectedly (not a problem of the key): parked with the reason. */
function failed(err: unknown): Arrival {
  const why = `deduplication failed: ${err instanceof Error ? err.message : String(err)}`;
  return { kind: 'park', reason: why, error: `${why}; parked` };
}

export class Admission {
  private evaluating = 0;

  constructor(private readonly dedupe: DeliveryDedupe) {}

  /** Deliveries waiting for their key: held by another copy or consumer, for the store, or for its expression. */
  get waiting(): number {
    return this.dedupe.gate.waiting + this.evaluating;
  }

  /**
   * What becomes of a delivery on `channel` (let go of once it closed): returned when its key is found
   * at once and the gate answers at once (a store that answers at once); otherwise undefined, and
   * `later` is called with it once known (once, however many turns it waits; it must not throw). A
   * callback, not a promise: no promise, closures or microtask per delivery on the hot path.
   */
  of(delivered: DeliveredMessage, channel: Channel, later: (arrival: Arrival) => void): Arrival | undefined {
    let found: DedupeKeyResult | Promise<DedupeKeyResult>;
    try {
      found = this.dedupe.keyOf(delivered);
    } catch (err) {
      return failed(err);
    }
    if (!(found instanceof Promise)) return this.guarded(found, channel, later);
    void this.evaluated(found).then((key) => {
      const now = this.guarded(key, channel, later);
      if (now !== undefined) later(now);
    });
    return undefined;
  }

  /** withKey, with an unexpected error parked with the reason rather than left in its prefetch slot (or thrown as an unhandled rejection). */
  private guarded(found: DedupeKeyResult, channel: Channel, later: (arrival: Arrival) => void): Arrival | undefined {
    try {
      return this.withKey(found, channel, later);
    } catch (err) {
      return failed(err);
    }
  }

  private withKey(found: DedupeKeyResult, channel: Channel, later: (arrival: Arrival) => void): Arrival | undefined {
    const { gate, noKey } = this.dedupe;
    if (channel.closed || gate.stopped) return GONE;
    if ('missing' in found) return noKey === 'park' ? { kind: 'park', reason: NO_DEDUPE_KEY } : { kind: 'deliver' };
    const problem = 'problem' in found ? found.problem : this.tooLong(found.key);
    if (problem !== undefined) {
      // A key that cannot be used is a configuration problem: parked rather than processed blindly.
      return { kind: 'park', reason: `deduplication key ${problem}`, error: `deduplication key ${problem}; parked` };
    }
    const key = (found as { key: string }).key;
    const now = gate.admitOr(key, (admission) => later(this.admitted(key, admission, channel)));
    return now === undefined ? undefined : this.admitted(key, now, channel);
  }

  /** What the gate's answer means for the delivery (its channel may be gone meanwhile). */
  private admitted(key: string, admission: GateAdmission, channel: Channel): Arrival {
    const { gate } = this.dedupe;
    if (channel.closed || gate.stopped) {
      if (admission === 'claimed') gate.release(key); // the broker has it again: the claim is not needed
      return GONE;
    }
    if (admission === 'duplicate') return DUPLICATE;
    return admission === 'claimed' ? { kind: 'deliver', key } : { kind: 'deliver' };
  }

  /** A key from an expression: counted as waiting meanwhile; an expression that failed is a problem. */
  private async evaluated(found: Promise<DedupeKeyResult>): Promise<DedupeKeyResult> {
    this.evaluating += 1;
    try {
      return await found;
    } catch (err) {
      return { problem: `expression failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      this.evaluating -= 1;
    }
  }

  private tooLong(key: string): string | undefined {
    const { maxKeyBytes, scope } = this.dedupe;
    const bytes = Buffer.byteLength(key);
    return bytes + Buffer.byteLength(scope) > maxKeyBytes ? `is ${bytes} bytes, longer than the store takes (${maxKeyBytes} bytes with the queue name)` : undefined;
  }
}
