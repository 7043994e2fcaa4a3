/**
 * When the gate looks at waiting deliveries again: one timer for every item that waits on time (a
 * key another consumer holds, a key of this consumer whose lease ends with copies waiting), always
 * armed for the earliest due time. An item with an earlier time than the armed one re-arms it, so a
 * copy held for a second is never looked at only when a 40 s lease of another key ends. The clock and
 * the timer are injected (tests run it on a clock of their own).
 */

/** The clock and the timer a schedule runs on. */
export interface Timer {
  /** ms since epoch (the stores' lease ends are in it). */
  now(): number;
  set(fire: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** setTimeout's longest delay: a longer one fires at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export const systemTimer: Timer = {
  now: Date.now,
  set(fire, ms) {
    const handle = setTimeout(fire, ms);
    handle.unref?.(); // a waiting copy does not keep the process alive
    return handle;
  },
  clear(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

export class RecheckSchedule<T> {
  /** Each item's due time (ms since epoch). */
  private readonly due = new Map<T, number>();
  private handle: unknown;
  /** When the timer fires (Infinity: not armed). */
  private armedAt = Infinity;

  /** `onDue` gets the items whose time has come, taken off the schedule (it may put them back). */
  constructor(
    private readonly onDue: (items: T[]) => void,
    private readonly timer: Timer = systemTimer,
  ) {}

  /** Items waiting. */
  get size(): number {
    return this.due.size;
  }

  /** When an item is due, if it is on the schedule. */
  dueAt(item: T): number | undefined {
    return this.due.get(item);
  }

  /** When the timer fires next (Infinity: it is not armed). */
  get next(): number {
    return this.armedAt;
  }

  /** Looks at `item` at `at` (ms since epoch), instead of any time it had. */
  set(item: T, at: number): void {
    this.due.set(item, at);
    if (at < this.armedAt) this.arm(at);
  }

  /** Takes an item off (it settled, or was looked at otherwise). */
  delete(item: T): void {
    this.due.delete(item);
    if (this.due.size === 0) this.disarm();
  }

  /** Takes every item off. */
  clear(): void {
    this.due.clear();
    this.disarm();
  }

  private arm(at: number): void {
    this.disarm();
    this.armedAt = at;
    this.handle = this.timer.set(() => this.fire(), Math.min(MAX_DELAY_MS, Math.max(0, at - this.timer.now())));
  }

  private disarm(): void {
    if (this.handle !== undefined) this.timer.clear(this.handle);
    this.handle = undefined;
    this.armedAt = Infinity;
  }

  private fire(): void {
    this.handle = undefined;
    this.armedAt = Infinity;
    const now = this.timer.now();
    const ready: T[] = [];
    let next = Infinity;
    for (const [item, at] of this.due) {
      if (at <= now) ready.push(item);
      else next = Math.min(next, at);
    }
    for (const item of ready) this.due.delete(item);
    if (next !== Infinity) this.arm(next);
    if (ready.length > 0) this.onDue(ready);
  }
}
