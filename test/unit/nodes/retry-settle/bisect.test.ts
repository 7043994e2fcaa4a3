/** Bisect: when a failed batch is split, and its two halves. */
import assert from 'node:assert/strict';
import type { BatchAmqp, BatchItem } from '../../../../src/nodes/shared/batch-msg';
import { bisects, halves } from '../../../../src/nodes/retry-settle/bisect';

function batchOfSize(size: number, split = 0): BatchAmqp {
  const items = Array.from({ length: size }, (_, i) => ({ deliveryId: `d:${i}`, retry: { attempt: 1 } }) as unknown as BatchItem);
  return { config: 'cfg', queue: 'q', batch: { id: 'b7', size, split }, items };
}

describe('bisect: whether a failed batch is split', () => {
  const batch = batchOfSize(4);
  it('a whole-batch error with no rule matched, or a permanent or done one: split', () => {
    assert.equal(bisects({ error: 'boom' }, batch, { kind: 'transient' }), true);
    assert.equal(bisects({ error: 'boom' }, batch, { kind: 'permanent', rule: 'constraint' }), true);
    assert.equal(bisects({ error: 'boom' }, batch, { kind: 'done', rule: 'duplicate' }), true);
  });

  it('a transient rule matched (the database is down): not split, every item retried', () => {
    assert.equal(bisects({ error: 'ECONNREFUSED' }, batch, { kind: 'transient', rule: 'down' }), false);
  });

  it('no error, per-item answers from the flow, or a single item: not split', () => {
    assert.equal(bisects({}, batch, { kind: 'transient' }), false);
    assert.equal(bisects({ error: null }, batch, { kind: 'transient' }), false);
    assert.equal(bisects({ error: 'x', outcomes: {} }, batch, { kind: 'transient' }), false);
    assert.equal(bisects({ error: 'x', errors: [] }, batch, { kind: 'transient' }), false);
    assert.equal(bisects({ error: 'x' }, batchOfSize(1), { kind: 'transient' }), false);
  });
});

describe('bisect: the halves', () => {
  it('payload and items sliced alike, split one more, ids of their own, the rest of the msg kept but its answer', () => {
    const batch = batchOfSize(5, 1);
    const msg = { _msgid: 'm1', payload: ['a', 'b', 'c', 'd', 'e'], topic: 't', error: 'boom', statusCode: 500, amqp: batch, keep: { x: 1 } };
    const [first, second] = halves(msg, batch);
    assert.deepEqual(first, { payload: ['a', 'b', 'c'], topic: 't', keep: { x: 1 }, amqp: { config: 'cfg', queue: 'q', batch: { id: 'b7.1', size: 3, split: 2 }, items: batch.items.slice(0, 3) } });
    assert.deepEqual(second, { payload: ['d', 'e'], topic: 't', keep: { x: 1 }, amqp: { config: 'cfg', queue: 'q', batch: { id: 'b7.2', size: 2, split: 2 }, items: batch.items.slice(3) } });
    assert.equal(msg.amqp.items.length, 5, 'the original batch left as it was');
  });

  it('two items: one each', () => {
    const batch = batchOfSize(2);
    const [first, second] = halves({ payload: [1, 2], amqp: batch }, batch);
    assert.deepEqual([first.payload, second.payload], [[1], [2]]);
  });
});
