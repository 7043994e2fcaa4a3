import assert from 'node:assert/strict';
import { NumberedSlots } from '../../../src/lib/collections/numbered';

describe('numbered slots (entries by a growing number)', () => {
  it('adds, finds, replaces and removes entries; says whether a delete found one', () => {
    const slots = new NumberedSlots<string>();
    slots.set(1, 'a');
    slots.set(2, 'b');
    slots.set(2, 'B');
    assert.deepEqual([slots.size, slots.get(1), slots.get(2), slots.get(3)], [2, 'a', 'B', undefined]);
    assert.equal(slots.delete(2), true);
    assert.equal(slots.delete(2), false);
    assert.equal(slots.get(2), undefined);
    assert.equal(slots.size, 1);
  });

  it('a number whose slot another number took later is not found there (same low bits)', () => {
    const slots = new NumberedSlots<string>();
    slots.set(5, 'five');
    slots.delete(5);
    slots.set(5 + 256, 'later');
    assert.equal(slots.get(5), undefined);
    assert.equal(slots.delete(5), false);
    assert.equal(slots.get(261), 'later');
  });

  it('an entry held while thousands pass waits aside, found and removed like the others', () => {
    const slots = new NumberedSlots<number>();
    slots.set(1, 1);
    for (let n = 2; n <= 5000; n += 1) {
      slots.set(n, n);
      if (n > 2) assert.equal(slots.delete(n - 1), true);
      assert.equal(slots.get(1), 1, `still there after ${n}`);
    }
    assert.deepEqual([slots.size, slots.values()], [2, [1, 5000]]);
    slots.set(1, -1);
    assert.equal(slots.get(1), -1, 'replaced where it waits');
    assert.equal(slots.delete(1), true);
    assert.deepEqual([slots.size, slots.get(1), slots.values()], [1, undefined, [5000]]);
  });

  it('does not grow for stragglers: hundreds held aside while a few at a time pass leave the ring its size', () => {
    const slots = new NumberedSlots<number>();
    const capacity = slots.capacity;
    const held = (n: number): boolean => n % 100 === 0; // one in a hundred waits (a message held), the rest pass ten at a time
    for (let n = 1; n <= 20_000; n += 1) {
      slots.set(n, n);
      const passed = n - 10;
      if (passed > 0 && !held(passed)) assert.equal(slots.delete(passed), true);
    }
    assert.equal(slots.size, 200 + 10 - 1, 'the 200 held and the last ten (one of them held)');
    assert.equal(slots.capacity, capacity, 'the ring kept its size: the held ones wait aside');
    for (let n = 100; n <= 20_000; n += 100) assert.equal(slots.get(n), n);
    for (let n = 19_991; n <= 20_000; n += 1) assert.equal(slots.get(n), n);
  });

  it('grows when half full and keeps every entry, listed ascending', () => {
    const slots = new NumberedSlots<number>();
    for (let n = 10; n < 10 + 3000; n += 1) slots.set(n, n * 2);
    assert.equal(slots.size, 3000);
    for (let n = 10; n < 10 + 3000; n += 1) assert.equal(slots.get(n), n * 2);
    const values = slots.values();
    assert.deepEqual([values.length, values[0], values[2999]], [3000, 20, 6018]);
    assert.deepEqual(slots.numbersAscending().slice(0, 3), [10, 11, 12]);
  });

  it('numbers far apart and beyond 2^32 each keep their own entry', () => {
    const slots = new NumberedSlots<string>();
    const numbers = [0, 7, 2 ** 32 + 7, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
    for (const n of numbers) slots.set(n, `n${n}`);
    for (const n of numbers) assert.equal(slots.get(n), `n${n}`);
    assert.deepEqual(slots.numbersAscending(), numbers);
    assert.equal(slots.delete(7), true);
    assert.equal(slots.get(2 ** 32 + 7), `n${2 ** 32 + 7}`);
  });

  it('clear empties it', () => {
    const slots = new NumberedSlots<string>();
    for (let n = 1; n <= 600; n += 1) slots.set(n, 'x');
    slots.set(1000, 'y');
    slots.clear();
    assert.deepEqual([slots.size, slots.get(1), slots.get(1000), slots.values()], [0, undefined, undefined, []]);
  });
});
