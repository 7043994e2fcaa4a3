/**
 * Deliveries whose channel was lost with the flow still on them, and their deduplication keys. The
 * broker has the message again, but the flow may still finish it: a late ack records its key, a late
 * retry or park releases it. Nothing may hold the key longer than the delivery would have lived,
 * though: once its settle deadline passes (the settle timeout would have retried it), the key is
 * released, and its copies (the redelivery among them) are processed instead of waiting for the
 * claim's lease.
 */

interface Orphan {
  key: string;
  /** The settle deadline it had (performance.now() ms; Infinity: no settle timeout). */
  deadline: number;
  /** Its key was released at the deadline: a late retry or park has nothing left to release. */
  released: boolean;
}

/** Remembered at most: the oldest are forgotten (their claims end with their lease). */
const MAX_ORPHANS = 10_000;

export class Orphans {
  /** By delivery id, in the order their channels were lost, which is also deadline order. */
  private readonly byId = new Map<string, Orphan>();

  constructor(private readonly max = MAX_ORPHANS) {}

  get size(): number {
    return this.byId.size;
  }

  add(id: string, key: string, deadline: number): void {
    this.byId.set(id, { key, deadline, released: false });
    for (const old of this.byId.keys()) {
      if (this.byId.size <= this.max) break;
      this.byId.delete(old);
    }
  }

  /** The earliest deadline of a key still claimed (Infinity: none). */
  get next(): number {
    for (const orphan of this.byId.values()) if (!orphan.released) return orphan.deadline;
    return Infinity;
  }

  /** The orphans whose deadline has passed by `now` and whose keys are still claimed: the keys to release. */
  expire(now: number): Array<{ id: string; key: string }> {
    const due: Array<{ id: string; key: string }> = [];
    for (const [id, orphan] of this.byId) {
      if (orphan.released) continue;
      if (orphan.deadline > now) break;
      orphan.released = true;
      due.push({ id, key: orphan.key });
    }
    return due;
  }

  /**
   * A late settle of an orphan: what to do with its key — `complete` (an ack: the effect is done),
   * `release` (a retry or park while the key is still claimed), or nothing (not an orphan, or its
   * key was released at its deadline already).
   */
  settle(id: string, action: string): { key: string; then: 'complete' | 'release' } | undefined {
    const orphan = this.byId.get(id);
    if (!orphan) return undefined;
    this.byId.delete(id);
    if (action === 'ack') return { key: orphan.key, then: 'complete' };
    return orphan.released ? undefined : { key: orphan.key, then: 'release' };
  }
}
