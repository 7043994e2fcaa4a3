/**
 * Entries by key, in the order they were added (a deduplication gate's keys held here, a store
 * batch's writes in flight): a Map, copied into a fresh one now and then (`renewal.ts` says why: a Map
 * that gains and loses an entry per message otherwise drags every delivery it held into the old
 * generation). Entries are never undefined.
 */
import { renewDue } from './renewal';

export class Dictionary<T> {
  private entries = new Map<string, T>();
  /** Additions since the last renewal. */
  private added = 0;

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(key: string, entry: T): void {
    this.added += 1;
    if (renewDue(this.added, this.entries.size)) {
      this.entries = new Map(this.entries);
      this.added = 0;
    }
    this.entries.set(key, entry);
  }

  /** Removes a key; says whether it was there. */
  delete(key: string): boolean {
    return this.entries.delete(key);
  }

  /** The entries, oldest first (the order their keys were added in). */
  values(): T[] {
    return this.entries.size === 0 ? [] : [...this.entries.values()];
  }

  clear(): void {
    this.entries = new Map();
    this.added = 0;
  }
}
