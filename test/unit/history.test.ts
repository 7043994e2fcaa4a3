import assert from 'node:assert/strict';
import { MINUTE_MS, MinuteRing, RetryHistory, RetryMetrics, WideCounts } from '../../src/lib/observe';

/** A clock the test moves by hand, starting at a whole minute. */
function clock(start = 1_000 * MINUTE_MS) {
  let now = start;
  return { now: () => now, to: (ms: number) => (now = ms), plus: (ms: number) => (now += ms) };
}

describe('WideCounts', () => {
  it('starts 8-bit and keeps values that fit', () => {
    const c = new WideCounts(4);
    c.add(1, 255);
    assert.equal(c.get(1), 255);
    assert.equal(c.bytes, 4);
  });
  it('widens to 16-bit past 255, keeping what it held', () => {
    const c = new WideCounts(4);
    c.set(0, 9);
    c.add(1, 65_535);
    assert.deepEqual([c.get(0), c.get(1)], [9, 65_535]);
    assert.equal(c.bytes, 8);
  });
  it('widens to 32-bit past 65 535 (from 8 or 16 bits), keeping what it held', () => {
    const c = new WideCounts(4);
    c.set(0, 7);
    c.set(2, 300);
    c.add(1, 65_536);
    assert.deepEqual([c.get(0), c.get(1), c.get(2)], [7, 65_536, 300]);
    assert.equal(c.bytes, 16);
  });
  it('widens to 64-bit floats past 2^32 - 1', () => {
    const c = new WideCounts(2);
    c.set(0, 2 ** 32 + 5);
    assert.equal(c.get(0), 2 ** 32 + 5);
    assert.equal(c.bytes, 16);
  });
  it('takes a negative value as 0', () => {
    const c = new WideCounts(1);
    c.set(0, -3);
    assert.equal(c.get(0), 0);
  });
});

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

describe('RetryHistory', () => {
  const owner = { consumer: 'c1', config: 'cfg', queue: 'orders' };
  it('gives a consumer its ring and reads it back with its owner', () => {
    const h = new RetryHistory(clock().now, 5);
    h.open(owner).add('acked', 2);
    const [only, ...rest] = h.read({ minutes: 1 });
    assert.equal(rest.length, 0);
    assert.deepEqual({ consumer: only?.consumer, config: only?.config, queue: only?.queue, open: only?.open, acked: only?.acked }, { ...owner, open: true, acked: [2] });
  });
  it('continues a reopened consumer (redeploy), starts afresh when its configuration or queue changed', () => {
    const h = new RetryHistory(clock().now, 5);
    h.open(owner).add('acked');
    h.close('c1');
    assert.equal(h.read()[0]?.open, false);
    h.open(owner).add('acked');
    assert.deepEqual(h.read({ minutes: 1 })[0]?.acked, [2]);
    h.open({ ...owner, queue: 'other' }).add('acked');
    assert.deepEqual(h.read({ minutes: 1 })[0]?.acked, [1]);
  });
  it('filters by consumer and by config', () => {
    const h = new RetryHistory(clock().now, 5);
    h.open(owner);
    h.open({ consumer: 'c2', config: 'cfg', queue: 'orders' });
    h.open({ consumer: 'c3', config: 'other', queue: 'mail' });
    assert.deepEqual(h.read({ config: 'cfg' }).map((s) => s.consumer), ['c1', 'c2']);
    assert.deepEqual(h.read({ consumer: 'c3' }).map((s) => s.consumer), ['c3']);
    assert.deepEqual(h.read({ consumer: 'c3', config: 'cfg' }), []);
  });
  it('counts a replay once, on the first running consumer of the configuration and queue', () => {
    const h = new RetryHistory(clock().now, 5);
    h.open(owner);
    h.open({ consumer: 'c2', config: 'cfg', queue: 'orders' });
    h.close('c1');
    h.replayed('cfg', 'orders', 3);
    h.replayed('cfg', 'elsewhere');
    assert.deepEqual(h.read({ minutes: 1 }).map((s) => [s.consumer, s.replayed[0]]), [['c1', 0], ['c2', 3]]);
  });
  it('forgets a closed consumer once its last minute has left the window', () => {
    const t = clock();
    const h = new RetryHistory(t.now, 5);
    h.open(owner);
    h.close('c1');
    t.plus(5 * MINUTE_MS - 1);
    assert.equal(h.read().length, 1);
    t.plus(1);
    assert.equal(h.read().length, 0);
    assert.equal(h.size, 0);
  });
});

describe('RetryMetrics: a consumer recorder', () => {
  it('counts a settle for Prometheus (by queue) and in the consumer history (duplicate as duplicates)', () => {
    const m = new RetryMetrics(clock().now);
    const r = m.consumer({ consumer: 'c1', config: 'cfg', queue: 'orders' });
    r.record('acked', 5);
    r.record('duplicate', 1);
    r.record('parked', 2, 'permanent');
    r.depth(7);
    m.replayed('orders', 'cfg');
    assert.deepEqual(m.counters('orders').consumed, { acked: 1, retried: 0, parked: 1, duplicate: 1, replayed: 1 });
    const s = m.history.read({ minutes: 1 })[0];
    assert.deepEqual([s?.acked, s?.duplicates, s?.parked, s?.replayed, s?.depth], [[1], [1], [1], [1], [7]]);
    r.close();
    assert.equal(m.history.read()[0]?.open, false);
  });
});
