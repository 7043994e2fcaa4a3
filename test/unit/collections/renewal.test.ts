import assert from 'node:assert/strict';
import { Dictionary } from '../../../src/lib/collections/dictionary';
import { RENEW_AFTER, renewDue } from '../../../src/lib/collections/renewal';
import { TagSet } from '../../../src/lib/collections/tag-set';

describe('renewal of a collection that churns (a fresh copy now and then)', () => {
  it('is due after RENEW_AFTER additions, later the more entries it holds', () => {
    assert.equal(renewDue(RENEW_AFTER - 1, 0), false);
    assert.equal(renewDue(RENEW_AFTER, 0), true);
    assert.equal(renewDue(RENEW_AFTER, 100), false, 'a copy of 100 entries waits for 400 more additions');
    assert.equal(renewDue(RENEW_AFTER + 400, 100), true);
  });

  it('a dictionary keeps its entries and their order across renewals', () => {
    const live = new Dictionary<number>();
    const last = 10 * RENEW_AFTER;
    for (let n = 1; n <= last; n += 1) {
      live.set(`k${n}`, n);
      // Each entry leaves 50 additions later, except every 97th, which stays.
      if (n > 50 && (n - 50) % 97 !== 0) live.delete(`k${n - 50}`);
    }
    const expected = Array.from({ length: last }, (_, i) => i + 1).filter((n) => n % 97 === 0 || n > last - 50);
    assert.deepEqual(live.values(), expected, 'what stayed, oldest first');
    for (const n of expected) assert.equal(live.get(`k${n}`), n);
    assert.equal(live.size, expected.length);
    assert.ok(
      live.values().every((v, i, all) => i === 0 || v > (all[i - 1] as number)),
      'in the order they were added',
    );
  });

  it('a tag set keeps its tags and its lowest across renewals', () => {
    const tags = new TagSet();
    tags.add(1);
    for (let t = 2; t <= 5 * RENEW_AFTER; t += 1) {
      tags.add(t);
      if (t > 2) tags.delete(t - 1);
    }
    assert.deepEqual([tags.size, tags.lowest()], [2, 1]);
    tags.delete(1);
    assert.deepEqual([tags.size, tags.lowest()], [1, 5 * RENEW_AFTER]);
  });
});
