/**
 * Deliveries waiting to be settled, by id. The id is plain text that travels on `msg`; the delivery
 * (and its channel) stays here, because Node-RED deep-clones `msg` on fan-out.
 * Taking an entry removes it, so a delivery can be settled once only; what ended it is remembered
 * (bounded) so a second settle gets a precise warning instead of a broker channel error.
 */

export type TakeResult<T> =
  | { status: 'live'; entry: T }
  /** Settled before, by a settle node or a timeout. */
  | { status: 'ended'; how: string }
  /** Its channel was lost before anyone settled it: the broker redelivers it. */
  | { status: 'stale'; how: string }
  | { status: 'unknown' };

interface Ending {
  how: string;
  stale: boolean;
}

export class DeliveryRegistry<T extends { id: string; owner: object }> {
  private readonly live = new Map<string, T>();
  // Two generations instead of evicting the oldest key one by one: a Map whose head keeps being
  // deleted gets slow to iterate (measured ~4.5 µs per settle at 10 000 entries, see the benchmark).
  private ended = new Map<string, Ending>();
  private previousEnded = new Map<string, Ending>();
  /** Live entries per owner, kept as a count: a consumer's status asks on every delivery. */
  private readonly perOwner = new Map<object, number>();
  private counter = 0;

  /**
   * @param prefix id of the node that owns the registry: ids read `<prefix>:<n>`, so a settle node can
   *   find the registry from the id alone.
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
    this.perOwner.set(entry.owner, (this.perOwner.get(entry.owner) ?? 0) + 1);
  }

  /** The live entry with this id, without taking it. */
  peek(id: string): T | undefined {
    return this.live.get(id);
  }

  /** Removes and returns a live entry; `how` is remembered as what ended it. */
  take(id: string, how: string): TakeResult<T> {
    const entry = this.live.get(id);
    if (entry) {
      this.drop(entry);
      this.remember(id, { how, stale: false });
      return { status: 'live', entry };
    }
    const ending = this.ended.get(id) ?? this.previousEnded.get(id);
    if (ending === undefined) return { status: 'unknown' };
    return { status: ending.stale ? 'stale' : 'ended', how: ending.how };
  }

  /** Ends every live entry of an owner because its channel is gone, and returns them. */
  endAllOf(owner: object, how: string): T[] {
    const gone: T[] = [];
    for (const entry of this.live.values()) {
      if (entry.owner === owner) gone.push(entry);
    }
    for (const entry of gone) {
      this.drop(entry);
      this.remember(entry.id, { how, stale: true });
    }
    return gone;
  }

  countOf(owner: object): number {
    return this.perOwner.get(owner) ?? 0;
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

  private drop(entry: T): void {
    this.live.delete(entry.id);
    const left = (this.perOwner.get(entry.owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(entry.owner, left);
    else this.perOwner.delete(entry.owner);
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
