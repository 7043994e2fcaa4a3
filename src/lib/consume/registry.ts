/**
 * A consumer's deliveries waiting to be settled, by id. The id is opaque text that travels on `msg`;
 * the delivery (and its channel) stays here, because Node-RED deep-clones `msg` on fan-out.
 * Ending an entry removes it, so a delivery can be settled once only; what ended it is remembered
 * (bounded) so a second settle gets a precise warning instead of a broker channel error.
 */
import { randomBytes } from 'node:crypto';
import { NumberedSlots } from '../collections';
import { SettleError, type SettleAction } from '../settle';

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

/** A status other than live. */
export type NotLive = Exclude<DeliveryStatus<unknown>, { status: 'live' }>;

const UNKNOWN: NotLive = { status: 'unknown' };

export class DeliveryRegistry<T extends { id: string }> {
  /** By the id's number, in a ring of slots (no hash table per message: collections/numbered.ts). */
  private readonly live = new NumberedSlots<T>();
  /**
   * Endings in a ring indexed by the id's number: remembering one is two array writes, where a Map of
   * the last 10 000 endings cost about 1.5 µs per settle (hashing, growth, and generations to evict).
   */
  private readonly endings: Array<Ending | undefined>;
  private readonly endedNumbers: Float64Array;
  /** Settles end with one of a few texts: one Ending object each, not one per settle. */
  private readonly shared = new Map<string, Ending>();
  private counter = 0;

  /**
   * @param token names this registry in its ids (`<token>:<n>`): random by default, so an id of a
   *   consumer that was redeployed never matches a delivery of its successor.
   * @param endedMemory how many of the latest ids' endings are remembered for double-settle warnings.
   */
  constructor(
    readonly token: string = randomBytes(6).toString('base64url'),
    private readonly endedMemory = 16_384,
  ) {
    this.endings = new Array<Ending | undefined>(endedMemory).fill(undefined);
    this.endedNumbers = new Float64Array(endedMemory);
  }

  nextId(): string {
    this.counter += 1;
    return `${this.token}:${this.counter}`;
  }

  /** Adds an entry under an id from {@link nextId}; any other id is refused. */
  add(entry: T): void {
    const n = this.numberOf(entry.id);
    if (n === 0) throw new Error(`delivery id ${entry.id} was not issued by this registry`);
    this.live.set(n, entry);
  }

  /** The live entry of an id, if it is waiting to be settled (the hot path: no status object). */
  entry(id: string): T | undefined {
    const entry = this.live.get(this.numberOf(id));
    return entry !== undefined && entry.id === id ? entry : undefined;
  }

  /**
   * Ends the live entry of an id and returns it, remembering `how` (a settle's hot path: the id is
   * read once); undefined, with nothing remembered, when the id is not live here.
   */
  take(id: string, how: string): T | undefined {
    const n = this.numberOf(id);
    const entry = this.live.get(n);
    if (entry === undefined || entry.id !== id) return undefined;
    this.live.delete(n);
    this.remember(n, how, false);
    return entry;
  }

  /** Whether this registry issued an id (live, ended, or too old to remember). */
  issued(id: string): boolean {
    return this.numberOf(id) > 0;
  }

  /** Whether a delivery can be settled, and if not, why. */
  status(id: string): DeliveryStatus<T> {
    const entry = this.entry(id);
    return entry ? { status: 'live', entry } : this.ending(id);
  }

  /** Why an id that is not live cannot be settled: how it ended, or that it is unknown. */
  ending(id: string): NotLive {
    const n = this.numberOf(id);
    const slot = n % this.endedMemory;
    const ending = n > 0 && this.endedNumbers[slot] === n ? this.endings[slot] : undefined;
    if (ending === undefined) return UNKNOWN;
    return { status: ending.stale ? 'stale' : 'ended', how: ending.how };
  }

  /**
   * Ends a delivery (live or not) and remembers `how`; `stale` when it was not settled but handed
   * back to the broker. A later ending of the same id replaces the earlier one.
   */
  end(id: string, how: string, stale = false): void {
    const n = this.numberOf(id);
    if (n === 0) return;
    if (this.live.get(n)?.id === id) this.live.delete(n);
    this.remember(n, how, stale);
  }

  /** Ends every live entry because the channel is gone, and returns them. */
  endAll(how: string): T[] {
    const gone = this.live.values();
    this.live.clear();
    for (const entry of gone) this.remember(this.numberOf(entry.id), how, true);
    return gone;
  }

  /** The live entries, oldest first (the order they were added in). */
  oldestFirst(): Iterable<T> {
    return this.live.values();
  }

  get size(): number {
    return this.live.size;
  }

  /** The number of one of this registry's ids; 0 for any other text. */
  private numberOf(id: string): number {
    const at = this.token.length + 1;
    if (id.length <= at || id.charCodeAt(at - 1) !== 58 /* : */ || !id.startsWith(this.token)) return 0;
    // Decimal digits only, read in place (every settle ends an id: no slice, no Number parse).
    let n = 0;
    for (let i = at; i < id.length; i += 1) {
      const digit = id.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return 0;
      n = n * 10 + digit;
    }
    return n > 0 && n <= this.counter ? n : 0;
  }

  /** Remembers the endings of the latest `endedMemory` ids; an id older than that is not remembered. */
  private remember(n: number, how: string, stale: boolean): void {
    if (n === 0 || this.counter - n >= this.endedMemory) return;
    const slot = n % this.endedMemory;
    this.endedNumbers[slot] = n;
    this.endings[slot] = stale ? { how, stale } : this.sharedEnding(how);
  }

  private sharedEnding(how: string): Ending {
    let ending = this.shared.get(how);
    if (!ending) {
      ending = { how, stale: false };
      if (this.shared.size < 32) this.shared.set(how, ending);
    }
    return ending;
  }
}

/** Why a delivery that is no longer live cannot be settled. */
export function notSettleable(status: NotLive, id: string, action: SettleAction): SettleError {
  switch (status.status) {
    case 'ended':
      return new SettleError(`message ${id} was already settled (${status.how}); this ${action} is ignored`, 'already-settled');
    case 'stale':
      return new SettleError(`message ${id} cannot be settled any more: ${status.how}; this ${action} is ignored`, 'stale');
    default:
      return new SettleError(`message ${id} is not known to this consumer (redeployed?); this ${action} is ignored`, 'unknown');
  }
}
