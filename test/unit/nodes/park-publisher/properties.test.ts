import assert from 'node:assert/strict';
import { parkPublisherProperties } from '../../../../src/nodes/park-publisher/properties';

describe('park-publisher properties', function () {
  it('reads its parking reason, trimmed', function () {
    assert.deepEqual(parkPublisherProperties({ reason: '  invalid order ' }), { reason: 'invalid order' });
  });

  it('a node saved without a reason (or with another type) has none', function () {
    assert.deepEqual(parkPublisherProperties({}), { reason: '' });
    assert.deepEqual(parkPublisherProperties({ reason: 42 }), { reason: '' });
  });
});
