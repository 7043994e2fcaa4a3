/**
 * Deduplication on arrival: a delivery's key is found (its messageId, a msg property, an expression),
 * checked (missing, unusable, longer than the store takes) and passed through the gate. Says what
 * becomes of the delivery; it calls nothing back.
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

const GONE: Arrival = Object.freeze({ kind: 'gone' });
const DUPLICATE: Arrival = Object.freeze({ kind: 'duplicate' });

export class Admission {
  private evaluating = 0;

  constructor(private readonly dedupe: DeliveryDedupe) {}

  /** Deliveries waiting for their key: held by another copy or consumer, for the store, or for its expression. */
  get waiting(): number {
    return this.dedupe.gate.waiting + this.evaluating;
  }

  /**
   * What becomes of a delivery; `live()` says whether its channel is still there. Answered at once
   * when its key is found at once and the gate answers at once (a store that answers at once); a
   * promise otherwise (one, however many turns it waits).
   */
  of(delivered: DeliveredMessage, live: () => boolean): Arrival | Promise<Arrival> {
    const found = this.dedupe.keyOf(delivered);
    return found instanceof Promise ? this.evaluated(found).then((key) => this.withKey(key, live)) : this.withKey(found, live);
  }

  private withKey(found: DedupeKeyResult, live: () => boolean): Arrival | Promise<Arrival> {
    const { gate, noKey } = this.dedupe;
    if (!live() || gate.stopped) return GONE;
    if ('missing' in found) return noKey === 'park' ? { kind: 'park', reason: NO_DEDUPE_KEY } : { kind: 'deliver' };
    const problem = 'problem' in found ? found.problem : this.tooLong(found.key);
    if (problem !== undefined) {
      // A key that cannot be used is a configuration problem: parked rather than processed blindly.
      return { kind: 'park', reason: `deduplication key ${problem}`, error: `deduplication key ${problem}; parked` };
    }
    const key = (found as { key: string }).key;
    let settled: ((arrival: Arrival) => void) | undefined;
    let early: Arrival | undefined;
    const now = gate.admitOr(key, (admission) => {
      const arrival = this.admitted(key, admission, live);
      if (settled) settled(arrival);
      else early = arrival;
    });
    if (now !== undefined) return this.admitted(key, now, live);
    return early ?? new Promise((resolve) => (settled = resolve));
  }

  /** What the gate's answer means for the delivery (its channel may be gone meanwhile). */
  private admitted(key: string, admission: GateAdmission, live: () => boolean): Arrival {
    const { gate } = this.dedupe;
    if (!live() || gate.stopped) {
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
