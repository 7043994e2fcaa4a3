import assert from 'node:assert/strict';
import { NO_REASON_KEY } from '../../../src/lib/parking/fold';
import { GroupPage, GroupTally, MAX_GROUPS } from '../../../src/lib/parking/groups';

describe('groups of parked messages', () => {
  it('counts each group with its first and last park time, largest first', () => {
    const tally = new GroupTally();
    tally.add('amount 1200 is over the 1000 limit', '2026-01-01T10:05:00.000Z', 0);
    tally.add('customer 7 unknown', '2026-01-01T10:03:00.000Z', 0);
    tally.add('amount 99 is over the 50 limit', '2026-01-01T10:02:00.000Z', 2);
    tally.add('amount 5 is over the 1 limit', '2026-01-01T10:14:00.000Z', 0);
    tally.add(null, null, 0);
    assert.deepEqual(tally.list(), [
      { key: 'amount {n} is over the {n} limit', example: 'amount 1200 is over the 1000 limit', count: 3, firstAt: '2026-01-01T10:02:00.000Z', lastAt: '2026-01-01T10:14:00.000Z', replayed: 1 },
      { key: 'customer {n} unknown', example: 'customer 7 unknown', count: 1, firstAt: '2026-01-01T10:03:00.000Z', lastAt: '2026-01-01T10:03:00.000Z', replayed: 0 },
      { key: NO_REASON_KEY, example: null, count: 1, firstAt: null, lastAt: null, replayed: 0 },
    ]);
    assert.equal(tally.ungrouped, 0);
  });

  it('keeps at most MAX_GROUPS groups and counts the rest as ungrouped', () => {
    const tally = new GroupTally();
    // Words of letters that are no hex digits: distinct after folding.
    const word = (i: number): string => Array.from(i.toString(20), (d) => 'ghijklmnopqrstuvwxyz'.charAt(parseInt(d, 20))).join('');
    for (let i = 0; i < MAX_GROUPS + 5; i += 1) tally.add(`reason ${word(i)}`, null, 0);
    assert.equal(tally.list().length, MAX_GROUPS);
    assert.equal(tally.ungrouped, 5);
  });

  it("pages one group's messages and counts the whole group, whatever the page: 10 of a queue of 20, pages of 4", () => {
    const reasons = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? `amount ${i} over the limit` : `customer ${i} unknown`));
    const read = (offset: number): GroupPage<number> => {
      const page = new GroupPage<number>('amount {n} over the limit', offset, 4);
      reasons.forEach((reason, position) => page.add(reason, () => position));
      return page;
    };
    const pages = [0, 4, 8].map(read);
    assert.deepEqual(pages.map((p) => p.messages), [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]);
    assert.deepEqual(pages.map((p) => p.more), [true, true, false]);
    assert.deepEqual(pages.map((p) => p.count), [10, 10, 10], "the group's count, not the queue's 20");
    const past = read(12);
    assert.deepEqual([past.messages, past.more, past.count], [[], false, 10]);
  });

  it('describes only the messages of the page', () => {
    const page = new GroupPage<string>('customer {n} unknown', 1, 1);
    const described: string[] = [];
    for (const reason of ['customer 1 unknown', 'customer 2 unknown', 'other', 'customer 3 unknown']) page.add(reason, () => (described.push(reason), reason));
    assert.deepEqual(described, ['customer 2 unknown']);
    assert.equal(page.count, 3);
  });
});
