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

  it('while the connection is down no key comes due; once it is back each deadline moves by the time it was down', () => {
    const o = new Orphans();
    o.add('n:1', 'a', 100);
    o.suspend(50);
    o.add('n:2', 'b', 200);
    o.suspend(80); // lost again while down: still down since 50
    assert.equal(o.next, Infinity, 'no deadline runs while the channel is gone');
    assert.deepEqual(o.expire(1000), [], 'the flow may be waiting for the broker to finish them');
    o.resume(1050);
    assert.equal(o.next, 1100, 'the settle timeout does not count the 1000 ms it was down');
    assert.deepEqual(o.expire(1099), []);
    assert.deepEqual(o.expire(1100), [{ id: 'n:1', key: 'a' }]);
    assert.deepEqual(o.expire(1200), [{ id: 'n:2', key: 'b' }]);
  });

  it('a key released before the loss is not due again; resuming without a loss moves nothing', () => {
    const o = new Orphans();
    o.add('n:1', 'a', 100);
    assert.deepEqual(o.expire(100), [{ id: 'n:1', key: 'a' }]);
    o.add('n:2', 'b', 900);
    o.resume(500);
    assert.equal(o.next, 900);
    o.suspend(600);
    o.resume(700);
    assert.equal(o.next, 1000);
    assert.equal(o.settle('n:1', 'retry'), undefined, 'released at its deadline already');
  });

  it('suspended: the consumer stopping releases every key still claimed (nothing settles them any more)', () => {
    const o = new Orphans();
    o.add('n:1', 'a', 100);
    o.suspend(50);
    assert.deepEqual(o.expire(Infinity), [{ id: 'n:1', key: 'a' }]);
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
