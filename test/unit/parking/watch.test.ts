/** QueueWatch without a broker: a fake connection counts the channels and checks it is asked for. */
import assert from 'node:assert/strict';
import type { Channel } from 'amqplib';
import { QueueWatch, type QueueChecker } from '../../../src/lib/parking';

class FakeChecker implements QueueChecker {
  connection: object | undefined = {};
  channels = 0;
  readonly checked: string[] = [];
  readonly depths = new Map<string, number>();
  withThrowawayChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T> {
    this.channels += 1;
    const channel = {
      checkQueue: (name: string) => {
        this.checked.push(name);
        const depth = this.depths.get(name);
        return depth === undefined ? Promise.reject(Object.assign(new Error('NOT_FOUND'), { code: 404 })) : Promise.resolve({ messageCount: depth });
      },
    };
    return work(channel as unknown as Channel);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('QueueWatch', () => {
  it('coalesces: watchers of the same interval share one look, each queue checked once', async () => {
    const checker = new FakeChecker();
    for (const q of ['a', 'a.parking', 'b', 'b.parking']) checker.depths.set(q, 1);
    const watch = new QueueWatch(checker);
    const heard: string[] = [];
    watch.watch(['a', 'a.parking'], 40, () => true, () => heard.push('a'));
    watch.watch(['b', 'b.parking', 'a.parking'], 40, () => true, () => heard.push('b'));
    for (let i = 0; i < 100 && heard.length < 2; i += 1) await sleep(5);
    watch.close();
    assert.deepEqual(heard.sort(), ['a', 'b']);
    assert.equal(checker.channels, 1, 'one look for both');
    assert.deepEqual(checker.checked.sort(), ['a', 'a.parking', 'b', 'b.parking']);
  });

  it('skips the queues of inactive watchers, and looks at none without a connection', async () => {
    const checker = new FakeChecker();
    checker.depths.set('a', 1);
    const watch = new QueueWatch(checker);
    let active = false;
    const heard: number[] = [];
    watch.watch(['a'], 20, () => active, (found) => heard.push(found.get('a') ?? -1));
    await sleep(60);
    assert.equal(checker.channels, 0);
    active = true;
    checker.connection = undefined;
    await sleep(60);
    assert.equal(checker.channels, 0);
    checker.connection = {};
    for (let i = 0; i < 100 && heard.length === 0; i += 1) await sleep(5);
    watch.close();
    assert.deepEqual(heard.slice(0, 1), [1]);
  });

  it('look() asked by many consumers in the same moment is one look (their stats share it), each queue once', async () => {
    const checker = new FakeChecker();
    for (let i = 0; i < 300; i += 1) checker.depths.set(`q${i}`, i).set(`q${i}.parking`, 0);
    const watch = new QueueWatch(checker);
    // 300 consumers' stats timers fire on the same boundary, a few ms apart at most.
    const answers: Array<Promise<ReadonlyMap<string, number | null>>> = [];
    for (let i = 0; i < 300; i += 1) {
      answers.push(watch.look([`q${i}`, `q${i}.parking`, 'q0.parking']));
      if (i % 100 === 99) await sleep(1);
    }
    const found = await Promise.all(answers);
    watch.close();
    assert.equal(checker.channels, 1, 'one channel, one look');
    assert.equal(checker.checked.length, 600, 'each queue checked once');
    assert.equal(found[299]!.get('q299'), 299);
  });

  it('a look asked on a watch interval\'s boundary (stats due with the parking watch) joins the watch\'s look', async () => {
    const checker = new FakeChecker();
    for (const q of ['w', 's']) checker.depths.set(q, 1);
    const watch = new QueueWatch(checker);
    const everyMs = 200;
    const heard: string[] = [];
    watch.watch(['w'], everyMs, () => true, () => heard.push('w'));
    // Wake exactly on the next boundary (a timer created after the watch's), as a stats timer does.
    await sleep(Math.ceil((Date.now() + 1) / everyMs) * everyMs - Date.now());
    const found = await watch.look(['s']);
    for (let i = 0; i < 100 && heard.length === 0; i += 1) await sleep(5);
    watch.close();
    assert.deepEqual([...found.keys()].sort(), ['s', 'w']);
    assert.equal(checker.channels, 1, 'one look for the watch and the stats');
  });

  it('look() answers at once; a queue that does not exist is null, the others are still checked', async () => {
    const checker = new FakeChecker();
    checker.depths.set('b', 3);
    const watch = new QueueWatch(checker);
    const found = await watch.look(['missing', 'b']);
    watch.close();
    assert.deepEqual([...found.entries()], [['missing', null], ['b', 3]]);
    assert.equal(checker.channels, 2, 'a 404 closes its channel: the next queue gets a fresh one');
  });

  it('soon() after a burst of parks is one look, and tells every watcher of the queue', async () => {
    const checker = new FakeChecker();
    checker.depths.set('q.parking', 5);
    const watch = new QueueWatch(checker);
    const heard: number[] = [];
    watch.watch(['q.parking'], 3_600_000, () => true, (found) => heard.push(found.get('q.parking') ?? -1));
    for (let i = 0; i < 10; i += 1) watch.soon(['q.parking']);
    for (let i = 0; i < 400 && heard.length === 0; i += 1) await sleep(5);
    watch.close();
    assert.deepEqual(heard, [5]);
    assert.equal(checker.channels, 1);
  });
});
