import assert from 'node:assert/strict';
import { retryConfigProperties } from '../../../../src/nodes/retry-config/properties';

describe('retry-config properties', function () {
  it('reads a node saved before error rules and partitions existed (version 1): its topology with their defaults, named by its main queue', function () {
    const read = retryConfigProperties({ broker: 'b1', mainQueue: 'orders', retryDelays: '1000,5000', maxAttempts: '3' });
    assert.equal(read.broker, 'b1');
    assert.equal(read.label, 'orders');
    assert.deepEqual(read.problems, []);
    assert.equal(read.topology?.mainQueue, 'orders');
    assert.equal(read.topology?.mode, 'declare');
    assert.equal(read.errorRules, undefined);
  });

  it('its name names it before its main queue; error rules are kept as saved for the classifier', function () {
    const read = retryConfigProperties({ name: 'Orders', mainQueue: 'orders', errorRules: '[]' });
    assert.equal(read.label, 'Orders');
    assert.equal(read.errorRules, '[]');
  });

  it('a topology that cannot be used: none, and its problem', function () {
    const read = retryConfigProperties({ mainQueue: '', maxAttempts: '0' });
    assert.equal(read.topology, undefined);
    assert.equal(read.problems.length, 1);
    assert.equal(read.label, '');
  });
});
