/**
 * The delivery tags of one channel that arrived and are not settled yet, and the lowest of them.
 * Tags arrive in ascending order on a channel, one apart, so they sit in a ring of slots
 * (`numbered.ts`: no hash table per message, nothing for V8 to link old to new, see `renewal.ts`),
 * and the lowest is found by walking up from the last lowest.
 */
import { NumberedSlots } from './numbered';

export class TagSet {
  private readonly tags = new NumberedSlots<true>();
  /** No tag below this one is in the set. */
  private low = Infinity;
  private high = -Infinity;

  get size(): number {
    return this.tags.size;
  }

  /** A tag: a whole number of at least 0 (AMQP's delivery tags start at 1). */
  add(tag: number): void {
    if (this.tags.get(tag) !== undefined) return;
    this.tags.set(tag, true);
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
    if (this.tags.size === 0) return Infinity;
    if (this.tags.get(this.low) !== undefined) return this.low;
    // Tags of a channel are consecutive: walking up from the last lowest steps over each tag once.
    // Far apart (tags that were never added), the numbers held are looked at instead.
    if (this.high - this.low > 4 * this.tags.size + 64) this.low = this.tags.numbersAscending()[0] ?? Infinity;
    else while (this.tags.get(this.low) === undefined) this.low += 1;
    return this.low;
  }

  clear(): void {
    this.tags.clear();
    this.reset();
  }

  private reset(): void {
    this.low = Infinity;
    this.high = -Infinity;
  }
}
