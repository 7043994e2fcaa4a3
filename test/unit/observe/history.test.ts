import assert from 'node:assert/strict';
import { MINUTE_MS, MinuteRing } from '../../../src/lib/observe';

/** A clock the test moves by hand, starting at a whole minute. */
function clock(start = 1_000 * MINUTE_MS) {
  let now = start;
  return { now: () => now, to: (ms: number) => (now = ms), plus: (ms: number) => (now += ms) };
}

describe('MinuteRing', () => {
  it('counts in the minute now and lists the last minutes oldest first', () => {
    const t = clock();
    const ring = new MinuteRing(t.now, 10);
    ring.add('acked', 2);
    t.plus(MINUTE_MS);
    ring.add('retried');
    ring.add('parked', 3);
    const s = ring.series(3);
    assert.equal(s.minutes, 3);
    assert.equal(s.start, 999 * MINUTE_MS);
    assert.deepEqual(s.acked, [0, 2, 0]);
    assert.deepEqual(s.retried, [0, 0, 1]);
    assert.deepEqual(s.parked, [0, 0, 3]);
  });
  it('clears the slots the clock moved past (a whole ring and more)', () => {
    const t = clock();
    const ring = new MinuteRing(t.now, 5);
    ring.add('acked', 9);
    t.plus(3 * MINUTE_MS);
    ring.add('acked');
    t.plus(7 * MINUTE_MS);
    assert.deepEqual(ring.series(5).acked, [0, 0, 0, 0, 0]);
  });
  it('keeps a minute still in the window when the clock moves on', () => {
    const t = clock();
    const ring = new MinuteRing(t.now, 5);
    ring.add('duplicates', 4);
    t.plus(4 * MINUTE_MS);
    assert.deepEqual(ring.series(5).duplicates, [4, 0, 0, 0, 0]);
    t.plus(MINUTE_MS);
    assert.deepEqual(ring.series(5).duplicates, [0, 0, 0, 0, 0]);
  });
  it('counts into an earlier minute when the clock goes back within the ring, drops what is older', () => {
    const t = clock();
    const ring = new MinuteRing(t.now, 5);
    t.plus(2 * MINUTE_MS);
    ring.add('acked');
    t.plus(-MINUTE_MS);
    ring.add('acked', 5);
    t.plus(-10 * MINUTE_MS);
    ring.add('acked', 100);
    t.plus(11 * MINUTE_MS);
    assert.deepEqual(ring.series(3).acked, [0, 5, 1]);
  });
  it('keeps the last depth of each minute and carries it into the minutes after; null before any', () => {
    const t = clock();
    const ring = new MinuteRing(t.now, 6);
    t.plus(MINUTE_MS);
    ring.depth(3);
    ring.depth(5);
    t.plus(2 * MINUTE_MS);
    assert.deepEqual(ring.series(4).depth, [null, 5, 5, 5]);
    ring.depth(0);
    assert.deepEqual(ring.series(2).depth, [5, 0]);
    ring.depth(undefined);
    t.plus(MINUTE_MS);
    assert.deepEqual(ring.series(2).depth, [null, null]);
  });
  it('bounds minutes asked for to 1..size', () => {
    const ring = new MinuteRing(clock().now, 8);
    assert.equal(ring.series(0).minutes, 1);
    assert.equal(ring.series(99).minutes, 8);
    assert.equal(ring.series(2.7).minutes, 2);
  });
  it('holds 1 byte a slot for each of its six series while counts fit 8 bits, widening only the series that needs it', () => {
    const ring = new MinuteRing(clock().now);
    assert.equal(ring.bytes, 6 * 1440);
    ring.add('acked', 1000);
    assert.equal(ring.bytes, 7 * 1440);
  });
});
