/** The keys an outbox write records as processed in its transaction: a single delivery's, a batch's items left to be acked. */
import assert from 'node:assert/strict';
import { processedKeys } from '../../../../src/nodes/outbox-write/processed-keys';
import type { NodeMessage } from '../../../../src/nodes/shared/node-red';

const key = (n: number) => ({ scope: 'orders', key: `k${n}` });

/** A batch msg of `size` items, each with its key unless listed in `keyless`. */
function batch(size: number, extra: Partial<NodeMessage> = {}, keyless: number[] = []): NodeMessage {
  const items = Array.from({ length: size }, (_, n) => (keyless.includes(n) ? { deliveryId: `d${n}` } : { deliveryId: `d${n}`, dedupe: key(n) }));
  return { payload: items.map((_, n) => n), amqp: { config: 'cfg', queue: 'orders', batch: { id: 'b', size, split: 0 }, items }, ...extra };
}

describe('processedKeys', () => {
  it('a single delivery: its key, or none', () => {
    assert.deepEqual(processedKeys({ amqp: { deliveryId: 'd', dedupe: key(1) } }), [key(1)]);
    assert.deepEqual(processedKeys({ amqp: { deliveryId: 'd' } }), []);
    assert.deepEqual(processedKeys({ amqp: { dedupe: { scope: 'orders', key: 7 } } }), []);
    assert.deepEqual(processedKeys({}), []);
  });

  it('a batch: every item\'s key', () => {
    assert.deepEqual(processedKeys(batch(3)), [key(0), key(1), key(2)]);
  });

  it('a batch: items without a key are left out', () => {
    assert.deepEqual(processedKeys(batch(3, {}, [1])), [key(0), key(2)]);
  });

  it('a batch: an item msg.outcomes names with retry or park is left out, one named ack is in', () => {
    assert.deepEqual(processedKeys(batch(4, { outcomes: { 1: 'park', 2: { action: 'retry' }, 3: 'ack' } })), [key(0), key(3)]);
    assert.deepEqual(processedKeys(batch(3, { outcomes: [null, 'retry'] })), [key(0), key(2)]);
  });

  it('a batch: an item msg.errors names is left out (its settle records or releases its key)', () => {
    assert.deepEqual(processedKeys(batch(3, { errors: { 2: 'duplicate key' } })), [key(0), key(1)]);
  });

  it('a batch: an outcome given for an item with an error decides', () => {
    assert.deepEqual(processedKeys(batch(2, { errors: ['boom'], outcomes: ['ack'] })), [key(0), key(1)]);
  });

  it('a batch whose msg.outcomes names an item it does not have: the error naming the index', () => {
    const result = processedKeys(batch(2, { outcomes: { 5: 'park' } }));
    assert.ok(result instanceof Error);
    assert.match(result.message, /msg\.outcomes\[5\]: out of range/);
  });

  it('a batch whose outcome is not one: the error naming the index', () => {
    const result = processedKeys(batch(2, { outcomes: { 1: 'skip' } }));
    assert.ok(result instanceof Error);
    assert.match(result.message, /msg\.outcomes\[1\]: 'skip' is not an outcome/);
  });
});
