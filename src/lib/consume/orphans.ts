/**
 * Deliveries whose channel was lost with the flow still on them, and their deduplication keys. The
 * broker has the message again, but the flow may still finish it: a late ack records its key, a late
 * retry or park releases it. Nothing may hold the key much longer than the delivery would have lived,
 * though: once its deadline passes (the settle timeout would have retried it), the key is released,
 * and its copies (the redelivery among them) are processed instead of waiting for the claim's lease.
 * While the connection is down no key is released: the flow may be waiting for the broker to finish
 * the message (a publish that waits through the reconnect, then the effect), and a copy processed
 * meanwhile would repeat that effect. When it is back, each deadline moves by the time it was down
 * ({@link resume}): the settle timeout does not count it.
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
  /** When the channel was lost, while it is gone: no deadline runs (see {@link suspend}). */
  private suspendedAt: number | undefined;

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
   * The channel is gone (at `now`): no key is released until {@link resume} (the flow may be waiting
   * for the broker to finish what it holds). A loss while suspended changes nothing.
   */
  suspend(now: number): void {
    this.suspendedAt ??= now;
  }

  /**
   * The consumer has a channel again (at `now`): deadlines run again, each key still claimed released
   * as much later as the connection was down (the settle timeout does not count that time). Every
   * deadline moves by the same time, so they stay in order.
   */
  resume(now: number): void {
    const since = this.suspendedAt;
    this.suspendedAt = undefined;
    if (since === undefined) return;
    const down = Math.max(0, now - since);
    for (const orphan of this.byId.values()) if (!orphan.released) orphan.deadline += down;
  }

  /** The earliest deadline of a key still claimed (Infinity: none, or suspended). */
  get next(): number {
    if (this.suspendedAt !== undefined) return Infinity;
    for (const orphan of this.byId.values()) if (!orphan.released) return orphan.deadline;
    return Infinity;
  }

  /**
   * The orphans whose deadline has passed by `now` and whose keys are still claimed: the keys to
   * release (none while suspended, unless `now` is Infinity: nothing will settle them any more).
   */
  expire(now: number): Array<{ id: string; key: string }> {
    const due: Array<{ id: string; key: string }> = [];
    if (this.suspendedAt !== undefined && now !== Infinity) return due;
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
