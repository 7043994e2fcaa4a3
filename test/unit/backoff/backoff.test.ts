import assert from 'node:assert/strict';
import { backoffDelay, cappedDelay } from '../../../src/lib/backoff';

describe('reconnect backoff', () => {
  const options = { initialMs: 1000, maxMs: 30_000, jitter: 0 };
  it('doubles from the initial delay up to the cap', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, options)), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
  it('spreads delays by the jitter, never past the cap', () => {
    assert.equal(backoffDelay(1, { ...options, jitter: 0.5 }, () => 0), 500);
    assert.equal(backoffDelay(1, { ...options, jitter: 0.5 }, () => 1), 1500);
    assert.equal(backoffDelay(10, { ...options, jitter: 0.5 }, () => 1), 30000);
  });
  it('without jitter is the capped delay, rounded: the capped delay itself is not', () => {
    assert.deepEqual([0, 1, 2, 6].map((n) => cappedDelay(n, options)), [1000, 1000, 2000, 30000]);
    assert.equal(cappedDelay(3, { initialMs: 100, maxMs: 10_000, factor: 3 }), 900);
    assert.equal(cappedDelay(2, { initialMs: 0.25, maxMs: 10 }), 0.5);
    assert.equal(backoffDelay(2, { initialMs: 0.25, maxMs: 10, jitter: 0 }), 1);
  });
});
