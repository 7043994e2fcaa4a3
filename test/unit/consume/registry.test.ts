import assert from 'node:assert/strict';
import { DeliveryRegistry } from '../../../src/lib/consume/registry';

describe('delivery registry', () => {
  const make = () => new DeliveryRegistry<{ id: string }>('cfg1', 2);

  it('answers live until an entry is ended, then says how it ended', () => {
    const r = make();
    const id = r.nextId();
    r.add({ id });
    assert.equal(r.issued(id), true);
    assert.deepEqual(r.status(id), { status: 'live', entry: { id } });
    assert.equal(r.size, 1);
    r.end(id, 'acked');
    assert.equal(r.size, 0);
    assert.deepEqual(r.status(id), { status: 'ended', how: 'acked' });
    assert.deepEqual(r.status('cfg1:999'), { status: 'unknown' });
  });

  it('takes a live entry once: it ends it and says how; an id that is not live is left as it was', () => {
    const r = make();
    const id = r.nextId();
    const other = r.nextId();
    r.add({ id });
    r.add({ id: other });
    assert.deepEqual(r.take(id, 'acked'), { id });
    assert.equal(r.size, 1);
    assert.deepEqual(r.status(id), { status: 'ended', how: 'acked' });
    assert.equal(r.take(id, 'retried'), undefined, 'a second settle finds nothing to take');
    assert.deepEqual(r.status(id), { status: 'ended', how: 'acked' }, 'and does not replace how it ended');
    assert.equal(r.take('cfg1:999', 'acked'), undefined);
    assert.equal(r.take(`x${other}`, 'acked'), undefined, 'another registry\'s id with the same number');
    assert.deepEqual(r.status(other), { status: 'live', entry: { id: other } });
  });

  it('marks the entries of a lost channel stale', () => {
    const r = make();
    const a = r.nextId();
    r.add({ id: a });
    assert.equal(r.endAll('channel lost').length, 1);
    assert.deepEqual(r.status(a), { status: 'stale', how: 'channel lost' });
    assert.equal(r.size, 0);
  });

  it('a later ending replaces an earlier one (a park that failed is not a settle)', () => {
    const r = make();
    const id = r.nextId();
    r.add({ id });
    r.end(id, 'parked');
    r.end(id, 'parking failed', true);
    assert.deepEqual(r.status(id), { status: 'stale', how: 'parking failed' });
  });

  it('remembers at least its memory of endings, then forgets the oldest', () => {
    const r = make();
    const ids = [r.nextId(), r.nextId(), r.nextId(), r.nextId(), r.nextId()];
    for (const id of ids) {
      r.add({ id });
      r.end(id, 'acked');
    }
    // Memory 2: the last two endings at least are remembered, the oldest are forgotten.
    assert.equal(r.status(ids[4]!).status, 'ended');
    assert.equal(r.status(ids[3]!).status, 'ended');
    assert.deepEqual(r.status(ids[0]!), { status: 'unknown' });
  });

  it('still knows a delivery settled 10 000 settles ago (the default memory: 16 384 ids)', () => {
    const r = new DeliveryRegistry<{ id: string }>('cfg2');
    const first = r.nextId();
    r.add({ id: first });
    r.end(first, 'acked');
    for (let i = 0; i < 9_999; i += 1) {
      const id = r.nextId();
      r.add({ id });
      r.end(id, 'acked');
    }
    assert.deepEqual(r.status(first), { status: 'ended', how: 'acked' });
  });

  it('an id that ends after its memory slot went to a newer id is not remembered (and does not evict the newer one)', () => {
    const r = make();
    const old = r.nextId();
    r.add({ id: old });
    const newer = [r.nextId(), r.nextId(), r.nextId()];
    for (const id of newer) {
      r.add({ id });
      r.end(id, 'acked');
    }
    r.end(old, 'parked');
    assert.deepEqual(r.status(old), { status: 'unknown' });
    assert.deepEqual(r.status(newer[2]!), { status: 'ended', how: 'acked' });
    assert.deepEqual(r.status(newer[1]!), { status: 'ended', how: 'acked' });
    assert.deepEqual(r.status('cfg1:abc'), { status: 'unknown' });
    assert.deepEqual(r.status('cfg10:1'), { status: 'unknown' });
  });

  it('names its ids with a random token by default: a redeployed consumer never settles its predecessor\'s delivery', () => {
    const before = new DeliveryRegistry<{ id: string }>();
    const after = new DeliveryRegistry<{ id: string }>();
    const id = before.nextId();
    assert.notEqual(before.token, after.token);
    assert.equal(after.nextId().endsWith(':1'), true);
    assert.equal(before.issued(id), true);
    assert.equal(after.issued(id), false);
    assert.deepEqual(after.status(id), { status: 'unknown' });
  });

  it('did not issue texts that are not its ids', () => {
    const r = make();
    r.nextId();
    for (const text of ['nocolon', 'cfg1:', 'cfg1:2', 'cfg10:1', 'other:1', 'cfg1:1.5', 'cfg1:1e0', 'cfg1: 1', 'cfg1:0x1', 'cfg1:-1', 'cfg1:1a']) assert.equal(r.issued(text), false, text);
    assert.equal(r.issued('cfg1:1'), true);
  });
});
