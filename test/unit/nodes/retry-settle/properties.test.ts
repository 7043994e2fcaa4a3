import assert from 'node:assert/strict';
import { retrySettleSettings, SETTLE_ACTIONS } from '../../../../src/nodes/retry-settle/properties';

describe('retry-settle properties', function () {
  it('reads a node saved with its defaults', function () {
    assert.deepEqual(retrySettleSettings({ action: 'ack', reason: '', bisect: false }), { action: 'ack', reason: '', bisect: false });
  });

  it('reads a retry node with its reason (trimmed) and bisect on', function () {
    assert.deepEqual(retrySettleSettings({ action: 'retry', reason: ' failed downstream ', bisect: true }), { action: 'retry', reason: 'failed downstream', bisect: true });
  });

  it('acks unless told to retry, and takes bad values as their defaults', function () {
    assert.equal(retrySettleSettings({}).action, 'ack');
    assert.equal(retrySettleSettings({ action: 'park' }).action, 'ack');
    assert.equal(retrySettleSettings({ reason: 42 }).reason, '');
    assert.equal(retrySettleSettings({ bisect: 'true' }).bisect, false);
  });

  it('offers ack and retry', function () {
    assert.deepEqual([...SETTLE_ACTIONS], ['ack', 'retry']);
  });
});
