/** Pure parts of the stores: the memory store's bounds, batches, Redis URLs, PostgreSQL settings, errors and table names. */
import assert from 'node:assert/strict';
import { answeredByScope, byScope, commonScope, distinctKeys, distinctNames } from '../../../src/lib/dedupe/batch';

const k = (key: string, scope = 'q'): { scope: string; key: string } => ({ scope, key });

describe('store batches', () => {
  it('asks each key once and maps the answers back', () => {
    const { unique, at } = distinctKeys([k('a'), k('b'), k('a'), k('a', 'other')]);
    assert.deepEqual(unique, [k('a'), k('b'), k('a', 'other')]);
    assert.deepEqual(at, [0, 1, 0, 2]);
    const again = distinctKeys([k('a'), k('b'), k('a')]);
    assert.deepEqual(again, { unique: [k('a'), k('b')], at: [0, 1, 0] }, 'one scope, a key twice');
  });

  it('a batch of distinct keys: the same list, nothing to map back (one scope or several)', () => {
    const keys = [k('a'), k('b'), k('a', 'other')];
    const all = distinctKeys(keys);
    assert.equal(all.unique, keys);
    assert.equal(all.at, undefined);
    const one = [k('a'), k('b')];
    assert.equal(distinctKeys(one).unique, one);
    assert.equal(distinctKeys(one).at, undefined);
    assert.deepEqual(distinctKeys([]), { unique: [], at: undefined });
  });

  it('names made strings: each asked once, answers mapped back only when some came twice', () => {
    assert.deepEqual(distinctNames(['a', 'b', 'a', 'c']), { unique: ['a', 'b', 'c'], at: [0, 1, 0, 2] });
    const names = ['a', 'b'];
    const all = distinctNames(names);
    assert.equal(all.unique, names, 'all distinct: the same list, nothing to map back');
    assert.equal(all.at, undefined);
    assert.deepEqual(distinctNames([]), { unique: [], at: undefined });
  });
});

describe('store batches by scope', () => {
  it("one scope (a gate's batch): one group, the names in order, nothing to map back", () => {
    assert.deepEqual(byScope([k('a'), k('b'), k('a')]), [{ scope: 'q', names: ['a', 'b', 'a'], positions: undefined }]);
  });

  it('several scopes: a group each, in the order each first came, with where each key was', () => {
    assert.deepEqual(byScope([k('a'), k('b', 'other'), k('c'), k('d', 'other'), k('e', '')]), [
      { scope: 'q', names: ['a', 'c'], positions: [0, 2] },
      { scope: 'other', names: ['b', 'd'], positions: [1, 3] },
      { scope: '', names: ['e'], positions: [4] },
    ]);
  });

  it('no keys: no group', () => {
    assert.deepEqual(byScope([]), []);
  });

  it('the common scope of several lists: undefined once two differ, or with no key at all', () => {
    assert.equal(commonScope([[k('a')], [], [k('b'), k('c')]]), 'q');
    assert.equal(commonScope([[k('a')], [k('b', 'other')]]), undefined);
    assert.equal(commonScope([[k('a', '')], [k('b', '')]]), '', 'the empty scope is a scope');
    assert.equal(commonScope([[], []]), undefined);
  });
});

describe('answers by scope', () => {
  it("each scope asked once, each answer in its key's place; one scope asked as it is", async () => {
    const asked: string[] = [];
    const ask = (scope: string, names: string[]): Promise<string[]> => {
      asked.push(`${scope}:${names.join(',')}`);
      return Promise.resolve(names.map((n) => `${scope}/${n}`));
    };
    assert.deepEqual(await answeredByScope(byScope([k('a'), k('b', 'other'), k('c')]), ask), ['q/a', 'other/b', 'q/c']);
    assert.deepEqual(asked, ['q:a,c', 'other:b']);
    assert.deepEqual(await answeredByScope(byScope([k('x'), k('y')]), ask), ['q/x', 'q/y']);
    assert.deepEqual(await answeredByScope(byScope([]), ask), []);
  });
});
