/**
 * The gate's recheck schedule on a clock of the test's own: one timer, always armed for the earliest
 * due item; an earlier item re-arms it, a later one does not; items taken off or moved are not looked
 * at when their old time comes.
 */
import assert from 'node:assert/strict';
import { RecheckSchedule } from '../../../src/lib/dedupe';
import { FakeTimer } from '../../helpers/fake-timer';

function schedule(): { timer: FakeTimer; due: string[][]; s: RecheckSchedule<string> } {
  const timer = new FakeTimer();
  const due: string[][] = [];
  const s = new RecheckSchedule<string>((items) => due.push(items), timer);
  return { timer, due, s };
}

describe('dedupe recheck schedule', () => {
  it('is armed for the earliest due item, whatever the order they came in', () => {
    const { timer, due, s } = schedule();
    s.set('lease-end', timer.now() + 40_000);
    s.set('held', timer.now() + 1000);
    assert.deepEqual(timer.armed, [1000], 'one timer, for the earliest');
    timer.advance(1000);
    assert.deepEqual(due, [['held']], 'the held key is looked at after its second, not after the lease');
    assert.deepEqual(timer.armed, [39_000], 'then armed for the next');
    timer.advance(39_000);
    assert.deepEqual(due, [['held'], ['lease-end']]);
    assert.deepEqual(timer.armed, [], 'nothing left: no timer');
  });

  it('a new item with an earlier time re-arms it; a later one leaves it', () => {
    const { timer, s } = schedule();
    s.set('a', timer.now() + 10_000);
    assert.equal(s.next, timer.now() + 10_000);
    s.set('b', timer.now() + 20_000);
    assert.equal(s.next, timer.now() + 10_000, 'a later item does not move the timer');
    s.set('c', timer.now() + 500);
    assert.equal(s.next, timer.now() + 500, 'an earlier one does');
    assert.deepEqual(timer.armed, [500], 'still one timer');
  });

  it('items due at the same time come together', () => {
    const { timer, due, s } = schedule();
    s.set('a', timer.now() + 100);
    s.set('b', timer.now() + 100);
    s.set('c', timer.now() + 200);
    timer.advance(150);
    assert.deepEqual(due, [['a', 'b']]);
  });

  it('an item taken off is not looked at; the last one taken off disarms it', () => {
    const { timer, due, s } = schedule();
    s.set('a', timer.now() + 100);
    s.set('b', timer.now() + 200);
    s.delete('a');
    timer.advance(100);
    assert.deepEqual(due, [], 'a settled key is not looked at');
    timer.advance(100);
    assert.deepEqual(due, [['b']]);
    s.set('c', timer.now() + 100);
    s.delete('c');
    assert.deepEqual(timer.armed, []);
    assert.equal(s.next, Infinity);
  });

  it('an item set again is looked at at its new time only (a renewed lease)', () => {
    const { timer, due, s } = schedule();
    s.set('k', timer.now() + 100);
    s.set('k', timer.now() + 300);
    assert.equal(s.dueAt('k'), timer.now() + 300);
    timer.advance(100);
    assert.deepEqual(due, []);
    timer.advance(200);
    assert.deepEqual(due, [['k']]);
  });

  it('an item due now is looked at on the next timer turn; what is looked at may be set again', () => {
    const timer = new FakeTimer();
    const due: string[] = [];
    const s: RecheckSchedule<string> = new RecheckSchedule((items) => {
      due.push(...items);
      if (due.length < 3) for (const item of items) s.set(item, timer.now() + 1000);
    }, timer);
    s.set('held', timer.now());
    assert.deepEqual(timer.armed, [0]);
    timer.advance(0);
    timer.advance(1000);
    timer.advance(1000);
    timer.advance(1000);
    assert.deepEqual(due, ['held', 'held', 'held'], 'rechecked every second until it stops asking');
    assert.equal(s.size, 0);
  });

  it('clear takes everything off', () => {
    const { timer, due, s } = schedule();
    s.set('a', timer.now() + 100);
    s.clear();
    timer.advance(1000);
    assert.deepEqual(due, []);
    assert.equal(s.size, 0);
  });
});
