/**
 * A consumer's deliveries waiting to be settled, by id. The id is plain text that travels on `msg`;
 * the delivery (and its channel) stays here, because Node-RED deep-clones `msg` on fan-out.
 * Ending an entry removes it, so a delivery can be settled once only; what ended it is remembered
 * (bounded) so a second settle gets a precise warning instead of a broker channel error.
 */

export type DeliveryStatus<T> =
  | { status: 'live'; entry: T }
  /** Settled before, by a settle node or a timeout. */
  | { status: 'ended'; how: string }
  /** It can no longer be settled here (channel lost, a park that failed): the broker has it again. */
  | { status: 'stale'; how: string }
  | { status: 'unknown' };

interface Ending {
  how: string;
  stale: boolean;
}

export class DeliveryRegistry<T extends { id: string }> {
  private readonly live = new Map<string, T>();
  // Two generations instead of evicting the oldest key one by one: a Map whose head keeps being
  // deleted gets slow to iterate (measured ~4.5 µs per settle at 10 000 entries, see the benchmark).
  private ended = new Map<string, Ending>();
  private previousEnded = new Map<string, Ending>();
  private counter = 0;

  /**
   * @param prefix id of the node that owns the registry: ids read `<prefix>:<n>`, so a settle node can
   *   find the owner from the id alone.
   * @param endedMemory how many ended ids at least to remember for double-settle warnings.
   */
  constructor(
    readonly prefix: string,
    private readonly endedMemory = 10_000,
  ) {}

  nextId(): string {
    this.counter += 1;
    return `${this.prefix}:${this.counter}`;
  }

  add(entry: T): void {
    this.live.set(entry.id, entry);
  }

  /** Whether a delivery can be settled, and if not, why. */
  status(id: string): DeliveryStatus<T> {
    const entry = this.live.get(id);
    if (entry) return { status: 'live', entry };
    const ending = this.ended.get(id) ?? this.previousEnded.get(id);
    if (ending === undefined) return { status: 'unknown' };
    return { status: ending.stale ? 'stale' : 'ended', how: ending.how };
  }

  /**
   * Ends a delivery (live or not) and remembers `how`; `stale` when it was not settled but handed
   * back to the broker. A later ending of the same id replaces the earlier one.
   */
  end(id: string, how: string, stale = false): void {
    this.live.delete(id);
    this.remember(id, { how, stale });
  }

  /** Ends every live entry because the channel is gone, and returns them. */
  endAll(how: string): T[] {
    const gone = [...this.live.values()];
    this.live.clear();
    for (const entry of gone) this.remember(entry.id, { how, stale: true });
    return gone;
  }

  get size(): number {
    return this.live.size;
  }

  /** Extracts the owner prefix of an id, or undefined when the text is not an id. */
  static prefixOf(id: unknown): string | undefined {
    if (typeof id !== 'string') return undefined;
    const at = id.lastIndexOf(':');
    return at > 0 ? id.slice(0, at) : undefined;
  }

  /** Keeps at least the last `endedMemory` endings (and at most twice as many). */
  private remember(id: string, ending: Ending): void {
    if (this.ended.size >= this.endedMemory) {
      this.previousEnded = this.ended;
      this.ended = new Map();
    }
    this.ended.set(id, ending);
  }
}
