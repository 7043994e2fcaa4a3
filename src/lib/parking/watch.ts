/**
 * Monitoring: how many messages wait in the parking queue for a human, and in the main and retry
 * queues. Passive checks, never a declare.
 */
import type { ChannelRunner } from '../topology';

/** What looking at queues needs of a broker connection (BrokerConnection has it). */
export interface QueueChecker {
  /** The live connection, undefined while there is none. */
  readonly connection: unknown;
  withThrowawayChannel: ChannelRunner;
}

export interface WatchedQueues {
  main: string;
  retry: string[];
  parking: string;
}

/**
 * Ready messages per queue, null for a queue that cannot be checked. A 404 closes the channel it
 * happens on, so the next queue gets a fresh one; a lost connection throws.
 */
export async function queueDepths(connection: QueueChecker, names: string[]): Promise<Map<string, number | null>> {
  const depths = new Map<string, number | null>();
  let pending = names;
  while (pending.length > 0) {
    pending = await connection.withThrowawayChannel(async (ch) => {
      for (const [i, name] of pending.entries()) {
        try {
          depths.set(name, (await ch.checkQueue(name)).messageCount);
        } catch (err) {
          if (!connection.connection) throw err;
          depths.set(name, null);
          return pending.slice(i + 1);
        }
      }
      return [];
    });
  }
  return depths;
}

/** One watcher of a QueueWatch: its queues, how often, and what it is told. */
interface Watcher {
  names: readonly string[];
  everyMs: number;
  /** Whether it wants a look now (e.g. its consumer is consuming). */
  active: () => boolean;
  listener: (depths: ReadonlyMap<string, number | null>) => void;
  due: number;
}

/** How soon a look asked for by `soon()` happens: parks in a burst share one look. */
const SOON_MS = 1000;
/** How long a look asked for by `look()` waits for others: consumers' stats due at the same moment share one look. */
export const SHARE_MS = 50;

/**
 * Queue depths for every watcher on one broker connection, coalesced: each tick is one look (one
 * channel, each queue name once) at the queues of every watcher due then, however many consumers
 * watch — hundreds of consumers do not add up to a polling storm. Watchers with the same interval
 * share their ticks. Passive checks only, never a declare.
 */
export class QueueWatch {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private nextAt = Infinity;
  /** Queues asked for by `soon()` or `look()`, with those waiting for the look. */
  private readonly asked = new Set<string>();
  private waiting: Array<(depths: ReadonlyMap<string, number | null>) => void> = [];
  private looking = false;

  constructor(private readonly connection: QueueChecker) {}

  /** Looks at `names` every `everyMs` while `active()`; the returned function stops watching. */
  watch(names: readonly string[], everyMs: number, active: () => boolean, listener: (depths: ReadonlyMap<string, number | null>) => void): () => void {
    if (everyMs <= 0) return () => undefined;
    // Aligned to the interval, so watchers of the same interval share each look.
    const watcher: Watcher = { names, everyMs, active, listener, due: Math.ceil((Date.now() + 1) / everyMs) * everyMs };
    this.watchers.add(watcher);
    // SHARE_MS after the boundary: consumers' stats falling due on the same boundary join this look.
    this.arm(watcher.due + SHARE_MS);
    return () => {
      this.watchers.delete(watcher);
    };
  }

  /** A look at these queues within about a second (after a park), shared with other requests; watchers of them are told. */
  soon(names: readonly string[]): void {
    for (const name of names) this.asked.add(name);
    this.arm(Date.now() + SOON_MS);
  }

  /**
   * Looks at these queues within SHARE_MS (with whatever else is asked by then: stats of many
   * consumers due at the same moment share one look), and resolves with what it found.
   */
  look(names: readonly string[]): Promise<ReadonlyMap<string, number | null>> {
    for (const name of names) this.asked.add(name);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.arm(Date.now() + SHARE_MS);
    });
  }

  /** Stops every look (the connection's owner goes away). */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.watchers.clear();
    for (const resolve of this.waiting.splice(0)) resolve(new Map());
  }

  private arm(at: number): void {
    if (at >= this.nextAt && this.timer !== undefined) return;
    clearTimeout(this.timer);
    this.nextAt = at;
    this.timer = setTimeout(() => void this.tick(), Math.max(0, at - Date.now()));
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.nextAt = Infinity;
    if (this.looking) {
      this.arm(Date.now() + SOON_MS);
      return;
    }
    const now = Date.now();
    const due = [...this.watchers].filter((w) => w.due <= now);
    for (const watcher of due) watcher.due = Math.ceil((now + 1) / watcher.everyMs) * watcher.everyMs;
    const told = due.filter((w) => w.active());
    const names = new Set(this.asked);
    this.asked.clear();
    for (const watcher of told) for (const name of watcher.names) names.add(name);
    const waiting = this.waiting.splice(0);
    let found: ReadonlyMap<string, number | null> = new Map();
    if (names.size > 0 && this.connection.connection) {
      this.looking = true;
      try {
        found = await queueDepths(this.connection, [...names]);
      } catch {
        // The connection went away: its consumers say so; the next tick looks again.
      } finally {
        this.looking = false;
      }
    }
    for (const resolve of waiting) resolve(found);
    // Every active watcher of a queue looked at hears of it, due or not (a look after a park corrects them all).
    for (const watcher of this.watchers) {
      if (watcher.names.some((name) => found.has(name)) && watcher.active()) watcher.listener(found);
    }
    let next = Infinity;
    for (const watcher of this.watchers) next = Math.min(next, watcher.due);
    if (this.asked.size > 0 || this.waiting.length > 0) next = Math.min(next, Date.now() + SOON_MS);
    if (next !== Infinity) this.arm(next + SHARE_MS);
  }
}
