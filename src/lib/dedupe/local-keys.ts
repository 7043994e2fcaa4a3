/**
 * The keys this consumer holds (claimed or being claimed, not yet completed or released) and the
 * copies of each waiting here: a copy of a key being processed waits for it to settle (a duplicate
 * then, or it takes over the claim on a release), or for its lease to end (a flow that never settles
 * it). Few keys ever get a copy, so a key's list of them is made only when the first comes.
 */
import { Dictionary } from '../collections';
import type { Admission } from './gate-terms';

/** What a waiting copy is told once its admission is known. */
export type Waiter = (admission: Admission) => void;

export interface LocalKey {
  readonly key: string;
  /** Copies waiting, oldest first; undefined until the first comes. */
  waiters: Waiter[] | undefined;
  /**
   * When this consumer's claim's lease ends (ms since epoch): a waiter may claim anew then. Infinity
   * while the claim is asked for (another consumer may hold the key): the lease starts when granted.
   */
  until: number;
}

/** The schedule a key with copies waiting is looked at again on when its lease ends (`recheck.ts`). */
export interface LeaseWatch {
  set(local: LocalKey, at: number): void;
  delete(local: LocalKey): void;
}

export class LocalKeys {
  /** A key comes and goes per message: a Map renewed now and then (collections/renewal.ts). */
  private readonly keys = new Dictionary<LocalKey>();
  /** Admissions ended: no copy waits any more, and none is looked at again. */
  private closed = false;

  constructor(private readonly leases: LeaseWatch) {}

  get(key: string): LocalKey | undefined {
    return this.keys.get(key);
  }

  /** A claim of `key` is asked for: its lease starts when it is granted. */
  add(key: string): void {
    this.keys.set(key, { key, waiters: undefined, until: Infinity });
  }

  /** Copies waiting behind every key. */
  get waiting(): number {
    let n = 0;
    for (const local of this.keys.values()) n += local.waiters?.length ?? 0;
    return n;
  }

  /** A copy of a key held here waits for it. */
  wait(local: LocalKey, waiter: Waiter): void {
    if (local.waiters) local.waiters.push(waiter);
    else local.waiters = [waiter];
    this.watch(local);
  }

  /** This consumer's claim of `key` is granted until `until`: copies waiting claim anew only if it ends unsettled. */
  granted(key: string, until: number): void {
    const local = this.keys.get(key);
    if (!local) return;
    local.until = until;
    if (local.waiters?.length) this.watch(local);
  }

  /**
   * The oldest copy waiting takes over the key's claim (still this consumer's; its lease starts anew
   * when granted): returned, or undefined when none waits (or admissions ended).
   */
  handOver(local: LocalKey): Waiter | undefined {
    const next = this.closed ? undefined : local.waiters?.shift();
    if (next) {
      local.until = Infinity;
      this.leases.delete(local);
    }
    return next;
  }

  /**
   * A key's time on the schedule came: when its lease ended unsettled (a flow that dropped the msg), the
   * copy to take over; otherwise undefined (looked at again when due, unless the key is gone since).
   */
  due(local: LocalKey, now: number): Waiter | undefined {
    if (this.keys.get(local.key) !== local) return undefined;
    const next = local.until <= now ? this.handOver(local) : undefined;
    if (!next) this.watch(local);
    return next;
  }

  /** The key is no longer held here (released, or its claim let go of); nothing of it is looked at again. */
  delete(key: string): void {
    const local = this.keys.get(key);
    if (local?.waiters) this.leases.delete(local); // only a key with copies waiting is on the schedule
    this.keys.delete(key);
  }

  /** A key is settled for good here: what waited for it is told `admission` (a duplicate: processed). */
  finish(key: string, admission: Admission): void {
    const local = this.keys.get(key);
    if (!local) return;
    this.keys.delete(key);
    const { waiters } = local;
    if (!waiters) return; // almost always: no copy came
    this.leases.delete(local);
    for (const waiter of waiters) waiter(admission);
  }

  /** Admissions end: every copy waiting is let go of (`unchecked`); the keys stay held until completed or released. */
  letGo(): void {
    this.closed = true;
    for (const local of this.keys.values()) {
      const { waiters } = local;
      local.waiters = undefined;
      if (waiters) for (const waiter of waiters) waiter('unchecked');
    }
  }

  /** A key with copies waiting is looked at when its lease ends. */
  private watch(local: LocalKey): void {
    if (this.closed) return;
    if (local.waiters?.length && local.until !== Infinity) this.leases.set(local, local.until);
    else this.leases.delete(local);
  }
}
