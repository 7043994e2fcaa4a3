/** The settle path's parts without a broker, through their narrow interfaces: Settler.copy, OrderedHold, Drain. */
import assert from 'node:assert/strict';
import { OrderedHold } from '../../../src/lib/settle';
import { delivery } from '../fixtures/tracked-delivery';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('OrderedHold', () => {
  it('counts the attempts of the held message; any other message starts at 1, with no limit', () => {
    const hold = new OrderedHold(1000);
    const log: string[] = [];
    const entry = delivery(log, 1, 'same');
    hold.hold({ ...entry, retry: { ...entry.retry, attempt: 4 } }, 'boom', () => undefined);
    const retry = { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] };
    assert.deepEqual(hold.retryOf(entry.message, retry), { ...retry, attempt: 5, maxAttempts: 0, remaining: null });
    assert.equal(hold.retryOf(delivery(log, 2, 'other').message, retry).attempt, 1);
    assert.equal(hold.retryOf(delivery(log, 3, 'same', 'm-2').message, retry).attempt, 1, 'same body, other messageId');
    hold.drop();
  });

  it('says it is blocked, runs the message again after the pause, and says when it flows again', async () => {
    const hold = new OrderedHold(10);
    const events: string[] = [];
    hold.on('blocked', (why) => events.push(why.replace(/since [^,]+/, 'since T')));
    hold.on('released', () => events.push('released'));
    const again: number[] = [];
    hold.hold(delivery([]), 'not yet', (attempt) => again.push(attempt));
    for (let i = 0; i < 100 && again.length === 0; i += 1) await sleep(5);
    assert.deepEqual(again, [2]);
    hold.release();
    hold.release();
    assert.deepEqual(events, ['blocked since T, attempt 1: not yet', 'released']);
  });

  it('does not run the message again once its channel is gone or the hold is dropped', async () => {
    const hold = new OrderedHold(10);
    const again: number[] = [];
    const gone = delivery([]);
    hold.hold(gone, '', (attempt) => again.push(attempt));
    gone.acks.closed = true;
    await sleep(30);
    hold.hold(delivery([]), '', (attempt) => again.push(attempt));
    hold.drop();
    await sleep(30);
    assert.deepEqual(again, []);
  });
});
