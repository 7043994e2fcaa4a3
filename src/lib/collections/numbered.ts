/**
 * Entries by a whole number that mostly grows by one per entry and whose entries mostly leave soon
 * (a registry's live deliveries by their id's number, a channel's unsettled delivery tags): a ring of
 * slots indexed by the number's low bits. Adding, finding and removing one is an array read or write,
 * with no hashing and no table that is rebuilt as entries come and go (a dictionary-mode object cost
 * about 1 µs per message in the consume path; docs/benchmark.md), so nothing for V8 to link old to
 * new either (renewal.ts). The ring doubles when it is half full. An entry still here when its slot
 * comes round again (a message held while many others pass) moves to a small side object, so the
 * ring does not grow for one straggler.
 */
const INITIAL_CAPACITY = 256;

export class NumberedSlots<T> {
  private slots: Array<T | undefined> = new Array<T | undefined>(INITIAL_CAPACITY).fill(undefined);
  /** The number each slot's entry was added under (meaningful while the slot holds one). */
  private numbers = new Float64Array(INITIAL_CAPACITY);
  private mask = INITIAL_CAPACITY - 1;
  /** Entries moved out of the ring, by number (rare: stragglers). */
  private aside: Record<number, T> = Object.create(null) as Record<number, T>;
  private asideCount = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The ring's slots (entries aside are not in it). */
  get capacity(): number {
    return this.slots.length;
  }

  get(n: number): T | undefined {
    const slot = n & this.mask;
    if (this.numbers[slot] === n) {
      const entry = this.slots[slot];
      if (entry !== undefined) return entry;
    }
    return this.asideCount === 0 ? undefined : this.aside[n];
  }

  /** Adds or replaces the entry of `n` (a whole number of at least 0, below 2^53). */
  set(n: number, entry: T): void {
    if (this.asideCount > 0 && this.aside[n] !== undefined) {
      this.aside[n] = entry;
      return;
    }
    let slot = n & this.mask;
    const there = this.slots[slot];
    if (there !== undefined && this.numbers[slot] === n) {
      this.slots[slot] = entry;
      return;
    }
    // Half full counts the ring's own entries: stragglers aside do not make it grow.
    if (2 * (this.count - this.asideCount + 1) > this.slots.length) {
      this.grow();
      slot = n & this.mask;
    }
    const holder = this.slots[slot];
    if (holder !== undefined) {
      // Its slot came round while it is still here: it waits aside, the ring stays the size it is.
      this.aside[this.numbers[slot] ?? 0] = holder;
      this.asideCount += 1;
    }
    this.slots[slot] = entry;
    this.numbers[slot] = n;
    this.count += 1;
  }

  /** Removes the entry of `n`; says whether there was one. */
  delete(n: number): boolean {
    const slot = n & this.mask;
    if (this.numbers[slot] === n && this.slots[slot] !== undefined) {
      this.slots[slot] = undefined;
      this.count -= 1;
      return true;
    }
    if (this.asideCount === 0 || this.aside[n] === undefined) return false;
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the rare side object, by number
    delete this.aside[n];
    this.asideCount -= 1;
    this.count -= 1;
    return true;
  }

  /** The numbers held, ascending. Walks the whole ring: not for a per-message path. */
  numbersAscending(): number[] {
    const found: number[] = [];
    for (let slot = 0; slot < this.slots.length; slot += 1) if (this.slots[slot] !== undefined) found.push(this.numbers[slot] ?? 0);
    if (this.asideCount > 0) for (const key of Object.keys(this.aside)) found.push(Number(key));
    return found.sort((a, b) => a - b);
  }

  /** The entries, ascending by number. Walks the whole ring: not for a per-message path. */
  values(): T[] {
    const entries: T[] = [];
    for (const n of this.numbersAscending()) {
      const entry = this.get(n);
      if (entry !== undefined) entries.push(entry);
    }
    return entries;
  }

  clear(): void {
    this.slots = new Array<T | undefined>(INITIAL_CAPACITY).fill(undefined);
    this.numbers = new Float64Array(INITIAL_CAPACITY);
    this.mask = INITIAL_CAPACITY - 1;
    this.aside = Object.create(null) as Record<number, T>;
    this.asideCount = 0;
    this.count = 0;
  }

  /** Twice the slots; each ring entry moves to its slot under the longer mask (no two can meet there). */
  private grow(): void {
    const slots = this.slots;
    const numbers = this.numbers;
    const capacity = slots.length * 2;
    this.slots = new Array<T | undefined>(capacity).fill(undefined);
    this.numbers = new Float64Array(capacity);
    this.mask = capacity - 1;
    for (let slot = 0; slot < slots.length; slot += 1) {
      const entry = slots[slot];
      if (entry === undefined) continue;
      const n = numbers[slot] ?? 0;
      this.slots[n & this.mask] = entry;
      this.numbers[n & this.mask] = n;
    }
  }
}
