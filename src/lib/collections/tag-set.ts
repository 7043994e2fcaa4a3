/**
 * The delivery tags of one channel that arrived and are not settled yet, and the lowest of them: a
 * plain object in dictionary mode, not a Set. A Set that gains and loses a tag per message rebuilds
 * its table every few dozen messages, and V8 links each table it leaves to the next one; once one of
 * them is in the old generation, every later table is kept alive through young collections (see
 * `dictionary.ts`, which replaces the delivery registry's Map for the same reason). Tags arrive in
 * ascending order on a channel, so the lowest is found by walking up from the last lowest.
 */
export class TagSet {
  private tags: Record<number, true> = Object.create(null) as Record<number, true>;
  private count = 0;
  /** No tag below this one is in the set. */
  private low = Infinity;
  private high = -Infinity;

  get size(): number {
    return this.count;
  }

  /** A tag: a whole number of at least 0 (AMQP's delivery tags start at 1). */
  add(tag: number): void {
    if (this.tags[tag] !== undefined) return;
    this.tags[tag] = true;
    this.count += 1;
    if (tag < this.low) this.low = tag;
    if (tag > this.high) this.high = tag;
  }

  /** Removes a tag; says whether it was there. */
  delete(tag: number): boolean {
    if (this.tags[tag] === undefined) return false;
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- a dictionary object is the point (no Map, see above)
    delete this.tags[tag];
    this.count -= 1;
    if (this.count === 0) this.reset();
    return true;
  }

  /** The lowest tag in the set; Infinity when it is empty. */
  lowest(): number {
    if (this.count === 0) return Infinity;
    if (this.tags[this.low] !== undefined) return this.low;
    // Tags of a channel are consecutive: walking up from the last lowest steps over each tag once.
    // Far apart (tags that were never added), the keys are looked at instead, listed in ascending order.
    if (this.high - this.low > 4 * this.count + 64) this.low = Number(Object.keys(this.tags)[0]);
    else while (this.tags[this.low] === undefined) this.low += 1;
    return this.low;
  }

  clear(): void {
    this.tags = Object.create(null) as Record<number, true>;
    this.count = 0;
    this.reset();
  }

  private reset(): void {
    this.low = Infinity;
    this.high = -Infinity;
  }
}
