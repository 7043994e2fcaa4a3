import assert from 'node:assert/strict';
import { nextBoundary, rate, settledEvent } from '../../../../src/nodes/retry-consumer/consumer-events';

/** The sample lines of one metric, without HELP/TYPE. */

describe('consumer events', () => {
  it('turns a settle into the event msg payload', () => {
    assert.deepEqual(settledEvent('orders', { outcome: { done: 'parked', attempt: 3, parkReason: 'max attempts (3) reached', parkedTo: 'p' }, reason: 'max attempts (3) reached', messageId: 'm', durationMs: 12 }), {
      event: 'parked',
      attempt: 3,
      reason: 'max attempts (3) reached',
      queue: 'orders',
      messageId: 'm',
      durationMs: 12,
      kind: null,
    });
    assert.equal(settledEvent('orders', { outcome: { done: 'parked', attempt: 1 }, reason: 'permanent (r): 400', messageId: null, durationMs: 1, kind: 'permanent' }).kind, 'permanent');
    assert.equal(settledEvent('orders', { outcome: { done: 'acked', attempt: 1 }, reason: 'ignored', messageId: null, durationMs: 1 }).reason, null);
    assert.equal(settledEvent('orders', { outcome: { done: 'retried', attempt: 1 }, reason: '', messageId: null, durationMs: 1 }).reason, null);
  });

  it('computes the consume rate per second', () => {
    assert.equal(rate(100, 400, 2000), 150);
    assert.equal(rate(0, 1, 3000), 0.33);
    assert.equal(rate(5, 5, 0), 0);
  });
});

describe('stats on the interval boundary (nextBoundary)', () => {
  it('waits until the next multiple of the interval, so consumers with one interval report together', () => {
    assert.equal(nextBoundary(10_000, 10_000), 10_000, 'exactly on a boundary: the next one');
    assert.equal(nextBoundary(12_345, 10_000), 7_655);
    assert.equal(nextBoundary(19_999, 10_000), 1);
    assert.equal(nextBoundary(1_700_000_004_321, 60_000) + 1_700_000_004_321, 1_700_000_040_000);
  });
});
