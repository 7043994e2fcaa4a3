import assert from 'node:assert/strict';
import { MINUTE_MS, RetryHistory } from '../../../src/lib/observe';

/** A clock the test moves by hand, starting at a whole minute. */
function clock(start = 1_000 * MINUTE_MS) {
  let now = start;
  return { now: () => now, to: (ms: number) => (now = ms), plus: (ms: number) => (now += ms) };
}

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
