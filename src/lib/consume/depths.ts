/**
 * A consumer's view of its queues' depths: the main, retry and parking queues as a QueueWatch last saw
 * them, the parking depth counting the consumer's own parks since that look (so a park shows at once),
 * and a look soon after each park to correct it (others park too; a human replays). Says `changed` when
 * the parking depth changed.
 */
import { EventEmitter } from 'node:events';
import type { QueueDepths } from '../observe';
import type { QueueWatch } from '../parking';

/** What depths need of a QueueWatch (one is shared by every consumer of a broker connection). */
export type DepthWatch = Pick<QueueWatch, 'watch' | 'soon' | 'look'>;

export class ConsumerDepths extends EventEmitter<{ changed: [] }> {
  private last: QueueDepths | undefined;
  private parkedSinceLook = 0;
  private stopWatching: (() => void) | undefined;
  private watching = false;
  private readonly names: string[];
  /** The consumer's parks counted so far (see `parkedSoFar`). */
  private parkedSeen = 0;

  /** @param own a watch of its own, closed at stop (none given: the consumer's connection's is shared) */
  constructor(
    private readonly watch: DepthWatch,
    private readonly queues: { main: string; retry: string[]; parking: string },
    private readonly own?: { close(): void },
  ) {
    super();
    this.names = [queues.parking, queues.main, ...queues.retry];
  }

  /** At the last look; undefined before the first. */
  get depths(): QueueDepths | undefined {
    return this.last;
  }

  /** Messages waiting in the parking queue: at the last look, plus this consumer's parks since; undefined when unknown. */
  get parking(): number | undefined {
    const looked = this.last?.parking;
    if (looked !== undefined && looked !== null) return looked + this.parkedSinceLook;
    return this.parkedSinceLook > 0 ? this.parkedSinceLook : undefined;
  }

  /** Looks every `everyMs` (0: never) while `active()`. */
  start(everyMs: number, active: () => boolean): void {
    this.watching = everyMs > 0;
    this.stopWatching = this.watch.watch(this.names, everyMs, active, (found) => this.looked(found));
  }

  stop(): void {
    this.stopWatching?.();
    this.own?.close();
  }

  /** The consumer's parks so far: the ones since the last call count at once. */
  parkedSoFar(total: number): void {
    if (total !== this.parkedSeen) this.parked(total - this.parkedSeen);
    this.parkedSeen = total;
  }

  /** This consumer parked `count` messages: they count at once, and a look follows soon. */
  parked(count: number): void {
    this.parkedSinceLook += count;
    this.emit('changed');
    this.watch.soon(this.names);
  }

  /**
   * A look within about a second, when watching: the consumer (re)started consuming (its first tick may
   * be most of an interval away), or someone else moved messages in or out of its queues (a replay).
   */
  lookSoon(): void {
    if (this.watching) this.watch.soon(this.names);
  }

  /** Looks now. */
  async look(): Promise<QueueDepths | undefined> {
    this.looked(await this.watch.look(this.names));
    return this.last;
  }

  private looked(found: ReadonlyMap<string, number | null>): void {
    if (![...this.names].some((name) => found.has(name))) return; // nothing of ours was looked at (no connection)
    const { main, retry, parking } = this.queues;
    const depth = (name: string): number | null => found.get(name) ?? null;
    const before = this.parking;
    this.last = { main: depth(main), retry: Object.fromEntries(retry.map((name) => [name, depth(name)])), parking: depth(parking) };
    this.parkedSinceLook = 0;
    if (this.parking !== before) this.emit('changed');
  }
}
