/**
 * Deduplication on arrival: a delivery's key is found (its messageId, a msg property, an expression),
 * checked (missing, unusable, longer than the store takes) and passed through the gate. Says what
 * becomes of the delivery; it calls nothing back.
 */
import type { DedupeGate, DedupeKeyResult } from '../dedupe';
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

export class Admission {
  private evaluating = 0;

  constructor(private readonly dedupe: DeliveryDedupe) {}

  /** Deliveries waiting for their key: held by another copy or consumer, for the store, or for its expression. */
  get waiting(): number {
    return this.dedupe.gate.waiting + this.evaluating;
  }

  /** What becomes of a delivery; `live()` says whether its channel is still there. */
  async of(delivered: DeliveredMessage, live: () => boolean): Promise<Arrival> {
    const { gate, noKey } = this.dedupe;
    const found = await this.keyOf(delivered);
    if (!live() || gate.stopped) return { kind: 'gone' };
    if ('missing' in found) return noKey === 'park' ? { kind: 'park', reason: NO_DEDUPE_KEY } : { kind: 'deliver' };
    const problem = 'problem' in found ? found.problem : this.tooLong(found.key);
    if (problem !== undefined) {
      // A key that cannot be used is a configuration problem: parked rather than processed blindly.
      return { kind: 'park', reason: `deduplication key ${problem}`, error: `deduplication key ${problem}; parked` };
    }
    const key = (found as { key: string }).key;
    const admission = await gate.admit(key);
    if (!live() || gate.stopped) {
      if (admission === 'claimed') gate.release(key); // the broker has it again: the claim is not needed
      return { kind: 'gone' };
    }
    if (admission === 'duplicate') return { kind: 'duplicate' };
    return admission === 'claimed' ? { kind: 'deliver', key } : { kind: 'deliver' };
  }

  private async keyOf(delivered: DeliveredMessage): Promise<DedupeKeyResult> {
    const found = this.dedupe.keyOf(delivered);
    if (!(found instanceof Promise)) return found;
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
