import assert from 'node:assert/strict';
import { DeliveryRegistry } from '../../src/lib/delivery-registry';

describe('delivery registry', () => {
  const owner = {};
  const other = {};
  const make = () => new DeliveryRegistry<{ id: string; owner: object }>('cfg1', 2);

  it('hands an entry out once, then says how it ended', () => {
    const r = make();
    const id = r.nextId();
    r.add({ id, owner });
    assert.equal(DeliveryRegistry.prefixOf(id), 'cfg1');
    assert.equal(r.take(id, 'acked').status, 'live');
    assert.deepEqual(r.take(id, 'acked'), { status: 'ended', how: 'acked' });
    assert.deepEqual(r.take('cfg1:999', 'acked'), { status: 'unknown' });
  });

  it('marks the entries of a lost channel stale', () => {
    const r = make();
    const a = r.nextId();
    const b = r.nextId();
    r.add({ id: a, owner });
    r.add({ id: b, owner: other });
    assert.equal(r.endAllOf(owner, 'channel lost').length, 1);
    assert.deepEqual(r.take(a, 'acked'), { status: 'stale', how: 'channel lost' });
    assert.equal(r.countOf(other), 1);
  });

  it('remembers at least its memory of endings, then forgets the oldest', () => {
    const r = make();
    const ids = [r.nextId(), r.nextId(), r.nextId(), r.nextId(), r.nextId()];
    for (const id of ids) {
      r.add({ id, owner });
      r.take(id, 'acked');
    }
    // Memory 2: the last two endings at least are remembered, the oldest are forgotten.
    assert.equal(r.take(ids[4]!, 'x').status, 'ended');
    assert.equal(r.take(ids[3]!, 'x').status, 'ended');
    assert.deepEqual(r.take(ids[0]!, 'x'), { status: 'unknown' });
  });

  it('still knows a delivery settled 10 000 settles ago (the default memory)', () => {
    const r = new DeliveryRegistry<{ id: string; owner: object }>('cfg2');
    const first = r.nextId();
    r.add({ id: first, owner });
    r.take(first, 'acked');
    for (let i = 0; i < 9_999; i += 1) {
      const id = r.nextId();
      r.add({ id, owner });
      r.take(id, 'acked');
    }
    assert.deepEqual(r.take(first, 'retried'), { status: 'ended', how: 'acked' });
  });

  it('reads no prefix from things that are not ids', () => {
    assert.equal(DeliveryRegistry.prefixOf(undefined), undefined);
    assert.equal(DeliveryRegistry.prefixOf('nocolon'), undefined);
  });
});
