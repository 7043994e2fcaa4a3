/** The deliveries of lost channels and their deduplication keys: released at their settle deadline, a late ack still recorded. */
import assert from 'node:assert/strict';
import { Orphans } from '../../../src/lib/consume';

describe('orphaned deliveries (lost channel, flow still on them)', () => {
  it('their keys come due in deadline order, each once', () => {
    const o = new Orphans();
    o.add('n:1', 'a', 100);
    o.add('n:2', 'b', 200);
    assert.equal(o.next, 100);
    assert.deepEqual(o.expire(50), []);
    assert.deepEqual(o.expire(150), [{ id: 'n:1', key: 'a' }]);
    assert.equal(o.next, 200);
    assert.deepEqual(o.expire(150), [], 'released once');
    assert.deepEqual(o.expire(250), [{ id: 'n:2', key: 'b' }]);
    assert.equal(o.next, Infinity);
  });

  it('no settle timeout: the key stays claimed (until the lease)', () => {
    const o = new Orphans();
    o.add('n:1', 'a', Infinity);
    assert.deepEqual(o.expire(1e12), []);
    assert.equal(o.next, Infinity);
  });

  it('a late ack completes its key, before or after its deadline; a late retry releases it only before', () => {
    const o = new Orphans();
    o.add('n:1', 'a', 100);
    o.add('n:2', 'b', 100);
    o.add('n:3', 'c', 100);
    assert.deepEqual(o.settle('n:1', 'retry'), { key: 'a', then: 'release' });
    o.expire(100);
    assert.deepEqual(o.settle('n:2', 'ack'), { key: 'b', then: 'complete' });
    assert.equal(o.settle('n:3', 'park'), undefined, 'released at its deadline: a copy may hold it now');
    assert.equal(o.settle('n:9', 'ack'), undefined, 'not an orphan');
    assert.equal(o.size, 0);
  });

  it('bounded: the oldest are forgotten', () => {
    const o = new Orphans(2);
    o.add('n:1', 'a', 1);
    o.add('n:2', 'b', 2);
    o.add('n:3', 'c', 3);
    assert.equal(o.size, 2);
    assert.equal(o.next, 2);
  });
});
