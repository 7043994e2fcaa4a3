import assert from 'node:assert/strict';
import { publishProperties } from '../../../../src/nodes/retry-publish/properties';

describe('retry-publish properties', function () {
  it('a node saved without its properties: publish mode, persistent, not partitioned, the key msg.key', function () {
    assert.deepEqual(publishProperties({}), {
      broker: '',
      settings: { mode: 'publish', exchange: '', routingKey: '', persistent: true, contentType: '', keepIds: false },
      declareQueue: '',
      partitions: '',
      partitionKey: { keyType: 'msg', key: 'key' },
    });
  });

  it('reads what it is set to', function () {
    const read = publishProperties({ broker: 'b1', mode: 'reply', exchange: 'x', routingKey: ' rk ', persistent: false, contentType: 'application/json', keepIds: true, declareQueue: 'replies', partitions: 'c1', keyType: 'jsonata', key: 'payload.id' });
    assert.deepEqual(read, {
      broker: 'b1',
      settings: { mode: 'reply', exchange: 'x', routingKey: 'rk', persistent: false, contentType: 'application/json', keepIds: true },
      declareQueue: 'replies',
      partitions: 'c1',
      partitionKey: { keyType: 'jsonata', key: 'payload.id' },
    });
  });

  it('a mode it does not know publishes; an expression left empty stays empty (it fails to parse), a msg property names msg.key', function () {
    assert.equal(publishProperties({ mode: 'broadcast' }).settings.mode, 'publish');
    assert.deepEqual(publishProperties({ keyType: 'jsonata', key: '' }).partitionKey, { keyType: 'jsonata', key: '' });
    assert.deepEqual(publishProperties({ keyType: 'msg', key: ' ' }).partitionKey, { keyType: 'msg', key: 'key' });
  });
});
