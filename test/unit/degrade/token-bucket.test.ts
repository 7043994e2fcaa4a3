/** The kill switch's state machine and the rate limit's token bucket, on a clock the tests move by hand. */
import assert from 'node:assert/strict';
import { burstOf, TokenBucket } from '../../../src/lib/degrade';

class Clock {
  ms = 1_000_000;
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

describe('the rate limit (token bucket)', () => {
  it('starts with one token, then gives rate tokens a second by the time elapsed', () => {
    const clock = new Clock();
    const bucket = new TokenBucket(200, burstOf(200), clock.now);
    assert.equal(bucket.take(), true);
    assert.equal(bucket.take(), false);
    assert.equal(bucket.waitMs(), 5);
    clock.advance(2);
    assert.equal(bucket.take(), false);
    assert.equal(bucket.waitMs(), 3);
    clock.advance(3);
    assert.equal(bucket.take(), true);
  });

  it('a late timer loses nothing: the tokens of the elapsed time are all there, up to the capacity', () => {
    const clock = new Clock();
    const bucket = new TokenBucket(200, 20, clock.now);
    bucket.take();
    clock.advance(37); // 7.4 tokens
    let taken = 0;
    while (bucket.take()) taken += 1;
    assert.equal(taken, 7);
    clock.advance(3); // 0.4 + 0.6 = 1
    assert.equal(bucket.take(), true);
  });

  it('over any stretch it gives at most rate × time + capacity, however it is asked', () => {
    const clock = new Clock();
    const rate = 200;
    const bucket = new TokenBucket(rate, burstOf(rate), clock.now);
    let taken = 0;
    // Asked at uneven moments over 10 s, idle spells included (they lose what is above the burst).
    const steps = [1, 7, 0, 13, 250, 2, 2, 3, 900, 4];
    for (let elapsed = 0, k = 0; elapsed < 10_000; k += 1) {
      const step = steps[k % steps.length] ?? 1;
      clock.advance(step);
      elapsed += step;
      while (bucket.take()) taken += 1;
    }
    assert.ok(taken <= rate * 10 + burstOf(rate), `${taken} taken`);
  });

  it('under a steady demand it gives exactly the rate', () => {
    const clock = new Clock();
    const bucket = new TokenBucket(0.5, burstOf(0.5), clock.now);
    let taken = bucket.take() ? 1 : 0;
    for (let ms = 0; ms < 60_000; ms += 1) {
      clock.advance(1);
      if (bucket.take()) taken += 1;
    }
    assert.equal(taken, 31, 'one at once, then one every 2 s for 60 s');
  });

  it('burst: a tenth of a second, at least one message', () => {
    assert.equal(burstOf(200), 20);
    assert.equal(burstOf(0.5), 1);
    assert.equal(burstOf(10), 1);
    assert.throws(() => new TokenBucket(0, 1, () => 0), /rate above 0/);
  });
});
