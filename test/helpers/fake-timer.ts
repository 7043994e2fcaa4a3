/** A clock and timer that move only when a test says: what waits on time is checked by order, not by waiting. */
import type { Timer } from '../../src/lib/dedupe';

export class FakeTimer implements Timer {
  private t = 1_000_000;
  private nextId = 0;
  private readonly pending = new Map<number, { at: number; fire: () => void }>();

  now(): number {
    return this.t;
  }

  set(fire: () => void, ms: number): unknown {
    this.nextId += 1;
    this.pending.set(this.nextId, { at: this.t + ms, fire });
    return this.nextId;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** When the timers set now fire, earliest first. */
  get armed(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.t).sort((a, b) => a - b);
  }

  /** Moves the clock on by `ms`, firing what comes due on the way, in time order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let first: [number, { at: number; fire: () => void }] | undefined;
      for (const entry of this.pending) if (entry[1].at <= end && (!first || entry[1].at < first[1].at)) first = entry;
      if (!first) break;
      this.pending.delete(first[0]);
      this.t = Math.max(this.t, first[1].at);
      first[1].fire();
    }
    this.t = end;
  }
}
