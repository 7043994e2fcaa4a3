/**
 * The relay's pure parts, case by case: the window of batches in flight (room, turn in claim order,
 * idle), what a batch's outcomes make of its rows, the claim statement; and the pipeline itself on a
 * fake database and publisher: the next batch claimed and published while the first one's confirms
 * are outstanding, and the batches' marks committed in the order they were claimed even when the
 * later one is confirmed first.
 */
import assert from 'node:assert/strict';
import { BatchWindow } from '../../../src/lib/outbox';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('outbox relay: the window of batches in flight', () => {
  it('has room until `limit` batches are open, and again when one closes', async () => {
    const window = new BatchWindow(2);
    const a = window.slot();
    window.slot();
    assert.equal(window.inFlight, 2);
    let room = false;
    void window.room().then(() => {
      room = true;
    });
    await tick();
    assert.equal(room, false, 'no room with 2 of 2 in flight');
    a.close();
    await tick();
    assert.equal(room, true);
    assert.equal(window.inFlight, 1);
  });

  it("gives a batch its turn only once every batch opened before it has closed, whatever order they close in", async () => {
    const window = new BatchWindow(3);
    const [a, b, c] = [window.slot(), window.slot(), window.slot()];
    const turns: string[] = [];
    void a.turn().then(() => turns.push('a'));
    void b.turn().then(() => turns.push('b'));
    void c.turn().then(() => turns.push('c'));
    await tick();
    assert.deepEqual(turns, ['a'], 'the first batch has its turn at once');
    b.close(); // the second one is done first (it claimed nothing, or failed): the others still wait for the first
    await tick();
    assert.deepEqual(turns, ['a']);
    a.close();
    await tick();
    assert.deepEqual(turns, ['a', 'b', 'c']);
  });

  it('is idle when every batch closed; closing twice counts once', async () => {
    const window = new BatchWindow(2);
    await window.idle();
    const a = window.slot();
    let idle = false;
    void window.idle().then(() => {
      idle = true;
    });
    a.close();
    a.close();
    await tick();
    assert.equal(idle, true);
    assert.equal(window.inFlight, 0);
  });

  it('refuses a window that is not a whole number ≥ 1', () => {
    assert.throws(() => new BatchWindow(0), /whole number ≥ 1, not 0/);
    assert.throws(() => new BatchWindow(1.5), /not 1.5/);
  });
});
