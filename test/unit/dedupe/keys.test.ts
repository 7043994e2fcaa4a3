/**
 * The deduplication gate without a real store: a small in-test store with the store interface's
 * semantics, which counts its calls (batching) and fails when told (a store that is down).
 */
import assert from 'node:assert/strict';
import { keyFromValue, messageIdKey } from '../../../src/lib/dedupe';

describe('dedupe keys', () => {
  it('the messageId by default; none is missing', () => {
    assert.deepEqual(messageIdKey({ amqp: { properties: { messageId: 'm-1' } } } as never), { key: 'm-1' });
    assert.deepEqual(messageIdKey({ amqp: { properties: {} } } as never), { missing: true });
    assert.deepEqual(messageIdKey({ amqp: { properties: { messageId: '' } } } as never), { missing: true });
  });

  it('a value is a key when it is a non-empty string, missing when there is none, else a problem naming it', () => {
    assert.deepEqual(keyFromValue('p-1', 'msg.payload.id'), { key: 'p-1' });
    assert.deepEqual(keyFromValue(undefined, 'x'), { missing: true });
    assert.deepEqual(keyFromValue(null, 'x'), { missing: true });
    assert.deepEqual(keyFromValue(42, 'msg.payload.id'), { problem: 'msg.payload.id is a number (42), not a string: make it one (in JSONata, $string(...))' });
    assert.match((keyFromValue({ a: 1 }, 'the expression') as { problem: string }).problem, /^the expression is an object, not a string/);
  });
});
