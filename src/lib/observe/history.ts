/**
 * One consumer's last 24 hours, minute by minute: what its settles came to (acked, retried, parked,
 * duplicates), the replays of its parked messages, and its parking queue's depth. A ring of 1440 minute
 * slots per series, in typed arrays (see WideCounts): bounded whatever the traffic. Pure, with an
 * injected clock; slots the clock moved past are cleared as it moves, never by a timer.
 */
import { WideCounts } from './wide-counts';

export const HISTORY_MINUTES = 1440;
export const MINUTE_MS = 60_000;

export const COUNTED = ['acked', 'retried', 'parked', 'replayed', 'duplicates'] as const;
export type Counted = (typeof COUNTED)[number];

/** The last minutes of a ring, oldest first; a minute's `depth` is null when no depth was known. */
export interface MinuteSeries extends Record<Counted, number[]> {
  /** Start of the first minute (ms since the epoch). */
  start: number;
  minutes: number;
  depth: Array<number | null>;
}

export type Clock = () => number;

export class MinuteRing {
  private readonly counts = {} as Record<Counted, WideCounts>;
  /** Depth + 1 at the last sample of each minute; 0: unknown. */
  private readonly depths: WideCounts;
  /** The minute (since the epoch) of the newest slot. */
  private head: number;
  private lastDepth: number | undefined;

  constructor(
    private readonly clock: Clock,
    readonly size = HISTORY_MINUTES,
  ) {
    for (const what of COUNTED) this.counts[what] = new WideCounts(size);
    this.depths = new WideCounts(size);
    this.head = this.minuteNow();
  }

  /** Counts `n` of `what` in the minute now. */
  add(what: Counted, n = 1): void {
    const slot = this.slotNow();
    if (slot !== undefined) this.counts[what].add(slot, n);
  }

  /** The parking depth now (undefined: not known); later minutes carry it until the next sample. */
  depth(value: number | undefined): void {
    this.lastDepth = value === undefined ? undefined : Math.max(0, Math.floor(value));
    const slot = this.slotNow();
    if (slot !== undefined) this.depths.set(slot, this.stored());
  }

  /** The last `minutes` minutes (1 to the ring's size), the minute now last. */
  series(minutes = this.size): MinuteSeries {
    this.slotNow();
    const n = Math.min(this.size, Math.max(1, Math.floor(minutes) || 1));
    const from = this.head - n + 1;
    const series: MinuteSeries = { start: from * MINUTE_MS, minutes: n, depth: [], acked: [], retried: [], parked: [], replayed: [], duplicates: [] };
    for (let m = from; m <= this.head; m++) {
      const slot = this.slotOf(m);
      for (const what of COUNTED) series[what].push(this.counts[what].get(slot));
      const d = this.depths.get(slot);
      series.depth.push(d === 0 ? null : d - 1);
    }
    return series;
  }

  /** Bytes held by the slots. */
  get bytes(): number {
    return COUNTED.reduce((sum, what) => sum + this.counts[what].bytes, this.depths.bytes);
  }

  private minuteNow(): number {
    return Math.floor(this.clock() / MINUTE_MS);
  }

  private slotOf(minute: number): number {
    return ((minute % this.size) + this.size) % this.size;
  }

  private stored(): number {
    return this.lastDepth === undefined ? 0 : this.lastDepth + 1;
  }

  /** The slot of the minute now, after clearing the slots the clock moved past; undefined when the clock went back out of the ring. */
  private slotNow(): number | undefined {
    const minute = this.minuteNow();
    if (minute > this.head) {
      const steps = Math.min(minute - this.head, this.size);
      for (let m = minute - steps + 1; m <= minute; m++) {
        const slot = this.slotOf(m);
        for (const what of COUNTED) this.counts[what].set(slot, 0);
        this.depths.set(slot, this.stored());
      }
      this.head = minute;
    }
    return minute > this.head - this.size ? this.slotOf(minute) : undefined;
  }
}
