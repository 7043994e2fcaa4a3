/**
 * The minute-by-minute history of every retry consumer of the process (see MinuteRing), by consumer:
 * what they settled, the replays of their parked messages, their parking depth. A consumer that
 * closes keeps its series (a redeploy continues it) until its last minute has left the 24 hours; so
 * the whole stays bounded by the consumers of one day.
 */
import { HISTORY_MINUTES, MINUTE_MS, MinuteRing, type Clock, type Counted, type MinuteSeries } from './history';

/** Whose series it is. */
export interface HistoryOwner {
  /** The consumer (its node id). */
  consumer: string;
  /** Its retry configuration (node id). */
  config: string;
  /** Its main queue. */
  queue: string;
}

export interface HistoryFilter {
  consumer?: string;
  config?: string;
  minutes?: number;
}

export type ConsumerHistory = HistoryOwner & MinuteSeries & { open: boolean };

interface Entry {
  owner: HistoryOwner;
  ring: MinuteRing;
  closedAt?: number;
}

export class RetryHistory {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock = Date.now,
    readonly minutes = HISTORY_MINUTES,
  ) {}

  /** The ring of a consumer that starts; its earlier series goes on unless its configuration or queue changed. */
  open(owner: HistoryOwner): MinuteRing {
    this.prune();
    const known = this.entries.get(owner.consumer);
    if (known && known.owner.config === owner.config && known.owner.queue === owner.queue) {
      delete known.closedAt;
      return known.ring;
    }
    const ring = new MinuteRing(this.clock, this.minutes);
    this.entries.set(owner.consumer, { owner: { ...owner }, ring });
    return ring;
  }

  /** The consumer stopped: its series stays readable until it has left the window. */
  close(consumer: string): void {
    const entry = this.entries.get(consumer);
    if (entry) entry.closedAt = this.clock();
  }

  /** Counts replayed messages of a configuration's parking queue once, on its first running consumer of that queue (else its first known one). */
  replayed(config: string, queue: string, n = 1): void {
    const mine = [...this.entries.values()].filter((e) => e.owner.config === config && e.owner.queue === queue);
    (mine.find((e) => e.closedAt === undefined) ?? mine[0])?.ring.add('replayed', n);
  }

  /** Counts `n` of `what` for a consumer (nothing when it has no series). */
  add(consumer: string, what: Counted, n = 1): void {
    this.entries.get(consumer)?.ring.add(what, n);
  }

  /** The series that match, each for the last `minutes` minutes (default: all). */
  read(filter: HistoryFilter = {}): ConsumerHistory[] {
    this.prune();
    const out: ConsumerHistory[] = [];
    for (const { owner, ring, closedAt } of this.entries.values()) {
      if (filter.consumer !== undefined && owner.consumer !== filter.consumer) continue;
      if (filter.config !== undefined && owner.config !== filter.config) continue;
      out.push({ ...owner, open: closedAt === undefined, ...ring.series(filter.minutes ?? this.minutes) });
    }
    return out;
  }

  /** Series held now. */
  get size(): number {
    return this.entries.size;
  }

  private prune(): void {
    const now = this.clock();
    for (const [id, entry] of this.entries) {
      if (entry.closedAt !== undefined && now - entry.closedAt >= this.minutes * MINUTE_MS) this.entries.delete(id);
    }
  }
}
