import assert from 'node:assert/strict';
import { TagSet } from '../../../src/lib/collections/tag-set';

describe('tag set (a channel’s unsettled delivery tags)', () => {
  it('counts tags, ignores a tag added twice, says whether a delete found one', () => {
    const tags = new TagSet();
    tags.add(1);
    tags.add(2);
    tags.add(2);
    assert.equal(tags.size, 2);
    assert.equal(tags.delete(2), true);
    assert.equal(tags.delete(2), false);
    assert.equal(tags.size, 1);
  });

  it('the lowest tag follows settles in any order; Infinity when empty', () => {
    const tags = new TagSet();
    assert.equal(tags.lowest(), Infinity);
    for (let t = 1; t <= 10; t += 1) tags.add(t);
    assert.equal(tags.lowest(), 1);
    tags.delete(3);
    tags.delete(1);
    assert.equal(tags.lowest(), 2);
    tags.delete(2);
    assert.equal(tags.lowest(), 4, 'steps over the tag settled before');
    for (const t of [10, 9, 4, 5, 6, 7]) tags.delete(t);
    assert.equal(tags.lowest(), 8);
    tags.delete(8);
    assert.equal(tags.lowest(), Infinity);
    tags.add(11);
    assert.equal(tags.lowest(), 11, 'a new tag after it emptied');
  });

  it('one tag held while thousands arrive and settle: the lowest stays it, then moves to the newest', () => {
    const tags = new TagSet();
    tags.add(1);
    for (let t = 2; t <= 5000; t += 1) {
      tags.add(t);
      if (t > 2) tags.delete(t - 1);
      assert.equal(tags.lowest(), 1);
    }
    tags.delete(1);
    assert.deepEqual([tags.size, tags.lowest()], [1, 5000]);
  });

  it('tags far apart (not added in a row) still give the lowest', () => {
    const tags = new TagSet();
    tags.add(5);
    tags.add(1_000_000);
    tags.add(2_000_000);
    tags.delete(5);
    assert.equal(tags.lowest(), 1_000_000);
    tags.add(3);
    assert.equal(tags.lowest(), 3, 'a tag below the last lowest');
  });

  it('clear empties it', () => {
    const tags = new TagSet();
    tags.add(7);
    tags.clear();
    assert.equal(tags.size, 0);
    assert.equal(tags.lowest(), Infinity);
  });
});
