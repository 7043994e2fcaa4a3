/**
 * The delivery tags of one channel that arrived and are not settled yet, and the lowest of them: a
 * Set, copied into a fresh one now and then (`renewal.ts` says why). Tags arrive in ascending order
 * on a channel, so the lowest is found by walking up from the last lowest.
 */
import { renewDue } from './renewal';

export class TagSet {
  private tags = new Set<number>();
  /** Additions since the last renewal. */
  private added = 0;
  /** No tag below this one is in the set. */
  private low = Infinity;
  private high = -Infinity;

  get size(): number {
    return this.tags.size;
  }

  /** A tag: a whole number of at least 0 (AMQP's delivery tags start at 1). */
  add(tag: number): void {
    if (this.tags.has(tag)) return;
    this.added += 1;
    if (renewDue(this.added, this.tags.size)) {
      this.tags = new Set(this.tags);
      this.added = 0;
    }
    this.tags.add(tag);
    if (tag < this.low) this.low = tag;
    if (tag > this.high) this.high = tag;
  }

  /** Removes a tag; says whether it was there. */
  delete(tag: number): boolean {
    if (!this.tags.delete(tag)) return false;
    if (this.tags.size === 0) this.reset();
    return true;
  }

  /** The lowest tag in the set; Infinity when it is empty. */
  lowest(): number {
    const { tags } = this;
    if (tags.size === 0) return Infinity;
    if (tags.has(this.low)) return this.low;
    // Tags of a channel are consecutive: walking up from the last lowest steps over each tag once.
    // Far apart (tags that were never added), the tags are looked at instead.
    if (this.high - this.low > 4 * tags.size + 64) {
      let low = Infinity;
      for (const tag of tags) if (tag < low) low = tag;
      this.low = low;
    } else {
      while (!tags.has(this.low)) this.low += 1;
    }
    return this.low;
  }

  clear(): void {
    this.tags = new Set();
    this.added = 0;
    this.reset();
  }

  private reset(): void {
    this.low = Infinity;
    this.high = -Infinity;
  }
}
