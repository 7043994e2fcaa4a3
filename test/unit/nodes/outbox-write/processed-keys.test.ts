import assert from 'node:assert/strict';
import { processedKeys } from '../../../../src/nodes/outbox-write/processed-keys';

const item = (n: number, dedupe?: unknown): Record<string, unknown> => ({ deliveryId: `d${n}`, properties: { messageId: `m${n}` }, ...(dedupe === undefined ? {} : { dedupe }) });

describe('outbox write: the keys recorded as processed in its transaction', () => {
  it("a single delivery's msg: its claimed key", () => {
    assert.deepEqual(processedKeys({ amqp: { deliveryId: 'd1', dedupe: { scope: 'q', key: 'm1' } } }), [{ scope: 'q', key: 'm1' }]);
  });

  it('a msg whose consumer did not deduplicate, or built by hand: none', () => {
    assert.deepEqual(processedKeys({ amqp: { deliveryId: 'd1' } }), []);
    assert.deepEqual(processedKeys({ payload: 1 }), []);
    assert.deepEqual(processedKeys({ amqp: { dedupe: { scope: 'q', key: 7 } } }), []);
  });

  it("a batch msg: every item's claimed key, in order (the write commits the whole batch's effect)", () => {
    const msg = { payload: [1, 2, 3], amqp: { config: 'c', queue: 'q', batch: { id: 'b', size: 3, split: 0 }, items: [item(1, { scope: 'q', key: 'm1' }), item(2, { scope: 'q', key: 'm2' }), item(3, { scope: 'q', key: 'm3' })] } };
    assert.deepEqual(processedKeys(msg), [
      { scope: 'q', key: 'm1' },
      { scope: 'q', key: 'm2' },
      { scope: 'q', key: 'm3' },
    ]);
  });

  it('a batch msg: items without a claimed key (no key: processed anyway) are left out', () => {
    const msg = { payload: [1, 2], amqp: { config: 'c', queue: 'q', batch: { id: 'b', size: 2, split: 0 }, items: [item(1), item(2, { scope: 'q', key: 'm2' })] } };
    assert.deepEqual(processedKeys(msg), [{ scope: 'q', key: 'm2' }]);
  });
});

describe('outbox write: a batch msg the flow failed in part', () => {
  const batch = (extra: Record<string, unknown>): Record<string, unknown> => ({
    payload: [1, 2, 3, 4],
    amqp: { config: 'c', queue: 'q', batch: { id: 'b', size: 4, split: 0 }, items: [1, 2, 3, 4].map((n) => item(n, { scope: 'q', key: `m${n}` })) },
    ...extra,
  });
  const keys = (msg: Record<string, unknown>): string[] => processedKeys(msg).map((k) => k.key);

  it('items named in msg.errors are left out: they are retried or parked, and a key recorded as processed would ack their next delivery as a duplicate', () => {
    assert.deepEqual(keys(batch({ errors: { 2: 'poison' } })), ['m1', 'm2', 'm4']);
    assert.deepEqual(keys(batch({ errors: [null, { message: 'x' }] })), ['m1', 'm3', 'm4']);
  });

  it("items given an outcome other than 'ack' are left out; 'ack' outcomes kept (an outcome overrides an error)", () => {
    assert.deepEqual(keys(batch({ outcomes: { 0: 'retry', 1: { action: 'park' }, 2: 'ack' }, errors: { 2: 'x', 3: 'y' } })), ['m3']);
  });

  it('unusable per-item answers (the settle refuses them, nothing is settled): no key', () => {
    assert.deepEqual(keys(batch({ outcomes: { 4: 'ack' } })), []);
    assert.deepEqual(keys(batch({ outcomes: { 0: 'maybe' } })), []);
  });
});
