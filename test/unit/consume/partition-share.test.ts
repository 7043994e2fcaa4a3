/** The share of partitions per instance: even (⌊P/M⌋ or ⌈P/M⌉ each), the same on every instance, and few moves when one joins or leaves. */
import assert from 'node:assert/strict';
import { MemberTable, ownPartitions, sharePartitions } from '../../../src/lib/consume/partition-share';

const ids = (n: number, prefix = 'host:1:consumer:'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i.toString(16)}`);

describe('partition share', () => {
  for (const [partitions, members] of [[8, 1], [8, 2], [8, 3], [8, 5], [10, 4], [3, 5], [256, 7], [2, 2]] as const) {
    it(`${partitions} partitions on ${members} instances: every partition once, each share ⌊P/M⌋ or ⌈P/M⌉`, () => {
      const shares = sharePartitions(ids(members), partitions);
      const all = [...shares.values()].flat().sort((a, b) => a - b);
      assert.deepEqual(all, Array.from({ length: partitions }, (_, i) => i));
      for (const share of shares.values()) {
        assert.ok(share.length === Math.floor(partitions / members) || share.length === Math.ceil(partitions / members), `${share.length} of ${partitions} on ${members}`);
      }
    });
  }

  it('is the same whatever order the instances are listed in, and with duplicates', () => {
    const members = ids(3);
    assert.deepEqual(sharePartitions([...members].reverse(), 8), sharePartitions(members, 8));
    assert.deepEqual(sharePartitions([...members, members[0]!], 8), sharePartitions(members, 8));
  });

  it('an instance sees its own share among the others, listed or not', () => {
    const members = ids(3);
    const shares = sharePartitions(members, 8);
    for (const m of members) {
      assert.deepEqual(ownPartitions(m, members, 8), shares.get(m));
      assert.deepEqual(ownPartitions(m, members.filter((o) => o !== m), 8), shares.get(m));
    }
    assert.deepEqual(ownPartitions('alone', [], 4), [0, 1, 2, 3]);
    assert.deepEqual(sharePartitions([], 4).size, 0);
  });

  it('moves few partitions when an instance joins or leaves: most keep their place', () => {
    let moved = 0;
    let trials = 0;
    for (let run = 0; run < 20; run++) {
      const members = ids(3, `h${run}:`);
      const before = sharePartitions(members, 24);
      const after = sharePartitions([...members, `h${run}:new`], 24);
      for (const m of members) moved += before.get(m)!.filter((p) => !after.get(m)!.includes(p)).length;
      trials++;
    }
    // The newcomer takes 6 of 24; a reshuffle (i mod M) would move about 18.
    assert.ok(moved / trials <= 9, `${moved / trials} moved per join on average`);
  });

  it('forgets an instance not heard from for the expiry, or one that said goodbye; a late heartbeat makes it new again', () => {
    const table = new MemberTable(3500);
    assert.equal(table.heard('b', 0), true);
    assert.equal(table.heard('b', 1000), false);
    assert.equal(table.heard('c', 2000), true);
    assert.deepEqual(table.live(4000), ['b', 'c']);
    assert.deepEqual(table.live(4600), ['c']);
    table.left('c');
    assert.deepEqual(table.live(4600), []);
    assert.equal(table.heard('b', 9000), true);
  });
});
