/**
 * Entries by key, in the order they were added (a deduplication gate's keys held here, a store
 * batch's calls): a plain object in dictionary mode, not a Map. A Map that gains and loses an
 * entry per message rebuilds its table every few dozen messages, and V8 links each table it leaves to
 * the next one (for iterators still walking it). Once one such table reached the old generation (at a
 * busy start, while the young generation is still small), it kept every later table alive through
 * young collections, and with them the deliveries they held: in a real Node-RED process about 1 KB
 * per message was promoted to the old generation and each young collection took 3–10 times as long
 * (docs/benchmark.md, *Where the GC time went*). An object's dictionary has no such link. Keys that
 * are array indexes ("42") are listed first, by number, in {@link values} (the registry's ids have a `:`).
 */
export class Dictionary<T> {
  private entries: Record<string, T> = Object.create(null) as Record<string, T>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): T | undefined {
    return this.entries[key];
  }

  has(key: string): boolean {
    return this.entries[key] !== undefined;
  }

  set(key: string, entry: T): void {
    if (this.entries[key] === undefined) this.count += 1;
    this.entries[key] = entry;
  }

  /** Removes a key; says whether it was there. */
  delete(key: string): boolean {
    if (this.entries[key] === undefined) return false;
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- a dictionary object is the point (no Map, see above)
    delete this.entries[key];
    this.count -= 1;
    return true;
  }

  /** The entries, oldest first (the order their keys were added in). */
  values(): T[] {
    return this.count === 0 ? [] : Object.values(this.entries);
  }

  clear(): void {
    this.entries = Object.create(null) as Record<string, T>;
    this.count = 0;
  }
}
