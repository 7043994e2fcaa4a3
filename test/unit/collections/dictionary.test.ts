import assert from 'node:assert/strict';
import { Dictionary } from '../../../src/lib/collections/dictionary';

describe('dictionary (entries by key, no Map)', () => {
  it('finds, counts and removes entries by id', () => {
    const live = new Dictionary<{ n: number }>();
    live.set('t:1', { n: 1 });
    live.set('t:2', { n: 2 });
    assert.equal(live.size, 2);
    assert.deepEqual(live.get('t:2'), { n: 2 });
    assert.equal(live.has('t:1'), true);
    assert.equal(live.delete('t:1'), true);
    assert.equal(live.delete('t:1'), false, 'a second delete finds nothing');
    assert.equal(live.has('t:1'), false);
    assert.equal(live.get('t:1'), undefined);
    assert.equal(live.size, 1);
  });

  it('replacing an entry under the same id does not count it twice', () => {
    const live = new Dictionary<string>();
    live.set('t:1', 'a');
    live.set('t:1', 'b');
    assert.equal(live.size, 1);
    assert.deepEqual(live.values(), ['b']);
  });

  it('lists the entries oldest first, across removals and many ids', () => {
    const live = new Dictionary<number>();
    for (let n = 1; n <= 5000; n += 1) {
      live.set(`t:${n}`, n);
      if (n % 3 !== 0) live.delete(`t:${n}`);
    }
    const values = live.values();
    assert.equal(values.length, live.size);
    assert.deepEqual(values.slice(0, 3), [3, 6, 9]);
    assert.ok(values.every((v, i) => i === 0 || v > values[i - 1]!), 'in the order they were added');
  });

  it('an id such as __proto__ or constructor is an id like any other', () => {
    const live = new Dictionary<number>();
    assert.equal(live.get('constructor'), undefined);
    live.set('__proto__', 1);
    live.set('constructor', 2);
    assert.equal(live.size, 2);
    assert.equal(live.get('__proto__'), 1);
    assert.deepEqual(live.values(), [1, 2]);
  });

  it('clear empties it', () => {
    const live = new Dictionary<number>();
    live.set('t:1', 1);
    live.clear();
    assert.equal(live.size, 0);
    assert.deepEqual(live.values(), []);
    live.set('t:2', 2);
    assert.deepEqual(live.values(), [2]);
  });
});
