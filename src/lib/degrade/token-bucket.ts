/**
 * A token bucket with an injected clock: `rate` tokens a second, refilled by the time elapsed (not
 * by timer ticks, so a late timer loses nothing), holding at most `capacity` — the burst after an
 * idle spell. Over any stretch of T seconds it gives at most `rate × T + capacity` tokens.
 */

/** The burst a rate limit allows: a tenth of a second's worth, at least one message. */
export function burstOf(rate: number): number {
  return Math.max(1, rate / 10);
}

/** Sums of small fractions come out a hair under a whole token: counted as one. */
const EPSILON = 1e-9;

export class TokenBucket {
  private tokens: number;
  private last: number;

  /** Starts with one token: the first message goes at once, with no burst at the start. */
  constructor(
    readonly rate: number,
    readonly capacity: number,
    private readonly now: () => number,
  ) {
    if (!(rate > 0) || !(capacity >= 1)) throw new RangeError(`a token bucket needs a rate above 0 and a capacity of at least 1 (rate ${rate}, capacity ${capacity})`);
    this.tokens = Math.min(1, capacity);
    this.last = now();
  }

  /** Takes one token if there is one. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1 - EPSILON) return false;
    this.tokens = Math.max(0, this.tokens - 1);
    return true;
  }

  /** Milliseconds until a token is there (0: now). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 - EPSILON ? 0 : ((1 - this.tokens) * 1000) / this.rate;
  }

  private refill(): void {
    const now = this.now();
    if (now > this.last) this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = Math.max(this.last, now);
  }
}
