/** Batch mode's collecting (issue 51), with fake timers: size, wait, flush, drop, stale items. */
import assert from 'node:assert/strict';
import { Batcher, batchPrefetch, MAX_BATCH_SIZE, type Timers } from '../../../src/lib/consume';

class FakeTimers implements Timers {
  armed: Array<{ due: () => void; ms: number }> = [];
  cleared = 0;
  set(due: () => void, ms: number): unknown {
    const timer = { due, ms };
    this.armed.push(timer);
    return timer;
  }
  clear(timer: unknown): void {
    const at = this.armed.indexOf(timer as { due: () => void; ms: number });
    if (at >= 0) {
      this.armed.splice(at, 1);
      this.cleared += 1;
    }
  }
  /** The wait runs out. */
  fire(): void {
    const timer = this.armed.shift();
    assert.ok(timer, 'no timer armed');
    timer.due();
  }
}

function batcher(size: number, waitMs = 200, live?: (n: number) => boolean): { b: Batcher<number>; sent: number[][]; timers: FakeTimers } {
  const sent: number[][] = [];
  const timers = new FakeTimers();
  const b = new Batcher<number>({ size, waitMs, send: (items) => sent.push(items), timers, ...(live ? { live } : {}) });
  return { b, sent, timers };
}

describe('Batcher', () => {
  it('sends a full batch at once, without waiting, and disarms its wait', () => {
    const { b, sent, timers } = batcher(3);
    for (const n of [1, 2, 3, 4]) b.add(n);
    assert.deepEqual(sent, [[1, 2, 3]]);
    assert.equal(b.pending, 1);
    assert.equal(timers.cleared, 1);
    assert.equal(timers.armed.length, 1, 'the fourth item armed the next batch\'s wait');
  });

  it('arms the wait once, at the first item of a batch, for waitMs', () => {
    const { b, timers } = batcher(10, 250);
    b.add(1);
    b.add(2);
    assert.deepEqual(timers.armed.map((t) => t.ms), [250]);
  });

  it('sends a partial batch when the wait runs out', () => {
    const { b, sent, timers } = batcher(10);
    b.add(1);
    b.add(2);
    assert.deepEqual(sent, []);
    timers.fire();
    assert.deepEqual(sent, [[1, 2]]);
    assert.equal(b.pending, 0);
  });

  it('flush sends what is collected at once and disarms the wait; an empty flush sends nothing', () => {
    const { b, sent, timers } = batcher(10);
    b.flush();
    assert.deepEqual(sent, []);
    b.add(1);
    b.flush();
    assert.deepEqual(sent, [[1]]);
    assert.equal(timers.armed.length, 0);
    b.add(2);
    assert.equal(timers.armed.length, 1, 'the next item starts a new wait');
  });

  it('drop forgets what is collected, sends nothing and returns it', () => {
    const { b, sent, timers } = batcher(10);
    b.add(1);
    b.add(2);
    assert.deepEqual(b.drop(), [1, 2]);
    assert.equal(b.pending, 0);
    assert.equal(timers.armed.length, 0);
    assert.deepEqual(sent, []);
  });

  it('leaves the items no longer live out of the batch they were in (never sent stale)', () => {
    const ended = new Set([2]);
    const { b, sent, timers } = batcher(10, 200, (n) => !ended.has(n));
    b.add(1);
    b.add(2);
    b.add(3);
    timers.fire();
    assert.deepEqual(sent, [[1, 3]]);
  });

  it('sends nothing when no item of the batch is live any more', () => {
    const { b, sent } = batcher(2, 200, () => false);
    b.add(1);
    b.add(2);
    assert.deepEqual(sent, []);
    assert.equal(b.pending, 0);
  });

  it('a batch of one sends every item on its own', () => {
    const { b, sent, timers } = batcher(1);
    b.add(1);
    b.add(2);
    assert.deepEqual(sent, [[1], [2]]);
    assert.equal(timers.armed.length, 0);
  });

  it('refuses a size that is not an integer from 1 to the maximum', () => {
    for (const size of [0, -1, 1.5, MAX_BATCH_SIZE + 1, Number.NaN]) assert.throws(() => batcher(size), RangeError, String(size));
    assert.doesNotThrow(() => batcher(MAX_BATCH_SIZE));
  });
});

describe('batchPrefetch', () => {
  it('room for two batches when the configured prefetch is less', () => {
    assert.equal(batchPrefetch(10, 500), 1000);
  });
  it('the configured prefetch when it is more', () => {
    assert.equal(batchPrefetch(2000, 500), 2000);
  });
  it('at most 65535 (RabbitMQ\'s largest)', () => {
    assert.equal(batchPrefetch(10, 10_000), 20_000);
    assert.equal(batchPrefetch(10, 40_000), 65_535);
  });
});
