/**
 * Monitoring: how many messages wait in the parking queue for a human, and in the main and retry
 * queues. Passive checks, never a declare.
 */
import type { QueueDepths } from '../observe';
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

export class ParkingWatch {
  /** Messages in the parking queue at the last look (from all consumers and the broker); undefined before. */
  depth: number | undefined;
  /** All the topology's queues at the last look; undefined before. */
  depths: QueueDepths | undefined;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param active whether to look now (the consumer is consuming)
   * @param changed called when the parking depth changed
   */
  constructor(
    private readonly connection: QueueChecker,
    private readonly queues: WatchedQueues,
    private readonly active: () => boolean,
    private readonly changed: () => void,
  ) {}

  start(everyMs: number): void {
    if (everyMs <= 0) return;
    this.timer = setInterval(() => void this.look(), everyMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Looks now (also between the periodic looks, e.g. for a stats msg). */
  async look(): Promise<void> {
    if (!this.active() || !this.connection.connection) return;
    const { main, retry, parking } = this.queues;
    try {
      const found = await queueDepths(this.connection, [parking, main, ...retry]);
      const depth = (name: string): number | null => found.get(name) ?? null;
      this.depths = { main: depth(main), retry: Object.fromEntries(retry.map((name) => [name, depth(name)])), parking: depth(parking) };
      const parked = found.get(parking);
      if (parked !== null && parked !== undefined && parked !== this.depth) {
        this.depth = parked;
        this.changed();
      }
    } catch {
      // Connection gone: the consumer's own checks report that.
    }
  }
}
