/**
 * Deliveries whose channel was lost with the flow still on them, and their deduplication keys. The
 * broker has the message again, but the flow may still finish it: a late ack records its key, a late
 * retry or park releases it. Nothing may hold the key much longer than the delivery would have lived,
 * though: once its deadline passes (the settle timeout would have retried it), the key is released,
 * and its copies (the redelivery among them) are processed instead of waiting for the claim's lease.
 * While the connection is down no key is released: the flow may be waiting for the broker to finish
 * the message (a publish that waits through the reconnect, then the effect), and a copy processed
 * meanwhile would repeat that effect. When it is back, each key still claimed gets the settle timeout
 * from then ({@link resume}).
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
  /** The connection is down: no deadline runs (see {@link suspend}). */
  private suspended = false;

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

  /**
   * The channel is gone: no key is released until {@link resume} (the flow may be waiting for the
   * broker to finish what it holds).
   */
  suspend(): void {
    this.suspended = true;
  }

  /**
   * The connection is back: deadlines run again, each key still claimed released at `deadline` at the
   * earliest (the settle timeout from now). Every orphan's own deadline is at most that, so they stay
   * in deadline order.
   */
  resume(deadline: number): void {
    this.suspended = false;
    for (const orphan of this.byId.values()) if (!orphan.released && orphan.deadline < deadline) orphan.deadline = deadline;
  }

  /** The earliest deadline of a key still claimed (Infinity: none, or suspended). */
  get next(): number {
    if (this.suspended) return Infinity;
    for (const orphan of this.byId.values()) if (!orphan.released) return orphan.deadline;
    return Infinity;
  }

  /**
   * The orphans whose deadline has passed by `now` and whose keys are still claimed: the keys to
   * release (none while suspended, unless `now` is Infinity: nothing will settle them any more).
   */
  expire(now: number): Array<{ id: string; key: string }> {
    const due: Array<{ id: string; key: string }> = [];
    if (this.suspended && now !== Infinity) return due;
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
