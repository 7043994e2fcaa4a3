import assert from 'node:assert/strict';
import { pageTid, sweepPlan } from '../../../src/lib/dedupe/sweep-ranges';

describe('dedupe sweep ranges', () => {
  it('an empty table: nothing to sweep', () => {
    assert.deepEqual(sweepPlan(7, 0, 4, 100), []);
  });

  it('covers the table once from page 0 in steps, the last range ending at the table end and leading back to page 0', () => {
    assert.deepEqual(sweepPlan(0, 10, 4, 100), [
      { from: 0, to: 4, next: 4 },
      { from: 4, to: 8, next: 8 },
      { from: 8, to: 10, next: 0 },
    ]);
  });

  it('from the middle: wraps to page 0 and stops where it started', () => {
    assert.deepEqual(sweepPlan(6, 10, 4, 100), [
      { from: 6, to: 10, next: 0 },
      { from: 0, to: 4, next: 4 },
      { from: 4, to: 6, next: 6 },
    ]);
  });

  it('the budget stops it early; the next sweep goes on from the last range done', () => {
    const first = sweepPlan(0, 10, 4, 6);
    assert.deepEqual(first, [
      { from: 0, to: 4, next: 4 },
      { from: 4, to: 6, next: 6 },
    ]);
    assert.deepEqual(sweepPlan(6, 10, 4, 6), [
      { from: 6, to: 10, next: 0 },
      { from: 0, to: 2, next: 2 },
    ]);
  });

  it('a sweep stopped after its first range goes on from that range next', () => {
    const [done] = sweepPlan(3, 10, 4, 100);
    assert.deepEqual(sweepPlan(done?.next ?? -1, 10, 4, 100)[0], { from: 7, to: 10, next: 0 });
  });

  it('a cursor past the end (the table shrank) starts again at page 0', () => {
    assert.deepEqual(sweepPlan(50, 3, 4, 100), [{ from: 0, to: 3, next: 0 }]);
  });

  it('odd steps and budgets still make progress', () => {
    assert.deepEqual(sweepPlan(0, 2, 0, 0), [{ from: 0, to: 1, next: 1 }]);
  });

  it('a page as its first tuple id', () => {
    assert.equal(pageTid(12), '(12,0)');
  });
});
