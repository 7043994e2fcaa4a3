/** The settle path's parts without a broker, through their narrow interfaces: Settler.copy, OrderedHold, Drain. */
import assert from 'node:assert/strict';
import type { ConsumeMessage, Message } from 'amqplib';
import { Drain } from '../../src/lib/consume';
import { PublishError } from '../../src/lib/publish';
import { OrderedHold, Settler, SettleError, type AckTarget, type CopyDecision, type TrackedDelivery } from '../../src/lib/settle';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An ack target that writes down what it is told, in order with the publishes. */
class Acks implements AckTarget {
  closed = false;
  constructor(private readonly log: string[]) {}
  ack(message: Message): void {
    if (this.closed) throw new Error('Channel closed');
    this.log.push(`ack ${message.fields.deliveryTag}`);
  }
  nack(message: Message, requeue: boolean): void {
    if (this.closed) throw new Error('Channel closed');
    this.log.push(`nack ${message.fields.deliveryTag}${requeue ? ' requeue' : ''}`);
  }
  reject(message: Message, requeue: boolean): void {
    if (this.closed) throw new Error('Channel closed');
    this.log.push(`reject ${message.fields.deliveryTag}${requeue ? ' requeue' : ''}`);
  }
}

function delivery(log: string[], tag = 1, content = 'body', messageId = 'm-1'): TrackedDelivery & { acks: Acks } {
  const message = { content: Buffer.from(content), fields: { deliveryTag: tag }, properties: { messageId, headers: {} } } as unknown as ConsumeMessage;
  return { id: `t:${tag}`, acks: new Acks(log), message, retry: { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] }, receivedAt: 0, deadline: Infinity };
}

const park: CopyDecision = { kind: 'park', queue: 'q.parking', reason: 'why', options: { persistent: true } };

describe('Settler', () => {
  function settler(log: string[], outcome: () => Promise<void> = () => Promise.resolve()): Settler {
    return new Settler({
      publish: (_exchange: string, routingKey: string) => {
        log.push(`publish ${routingKey}`);
        return outcome();
      },
    });
  }

  it('copy: the confirmed publish first, the ack only after it', async () => {
    const log: string[] = [];
    await settler(log).copy(delivery(log), park, 'park');
    assert.deepEqual(log, ['publish q.parking', 'ack 1']);
  });

  it('copy: a refused publish rejects with its error and acks nothing', async () => {
    const log: string[] = [];
    await assert.rejects(
      settler(log, () => Promise.reject(new Error('no route'))).copy(delivery(log), park, 'park'),
      /no route/,
    );
    assert.deepEqual(log, ['publish q.parking']);
  });

  // Issue 39, item 9: a park copy lost because the broker closed the shared copy channel for another publish.
  it('copy: a publish lost with its channel is tried once more at once, then acked', async () => {
    const log: string[] = [];
    let tries = 0;
    const lost = (): Promise<void> => (++tries === 1 ? Promise.reject(new PublishError('publish failed: channel closed (404)', 'channel-closed')) : Promise.resolve());
    await settler(log, lost).copy(delivery(log), park, 'park');
    assert.deepEqual(log, ['publish q.parking', 'publish q.parking', 'ack 1']);
  });

  it('copy: lost with its channel twice, the second error is the caller\'s; acks nothing', async () => {
    const log: string[] = [];
    let tries = 0;
    const lost = (): Promise<void> => Promise.reject(new PublishError(`lost ${++tries}`, 'channel-closed'));
    await assert.rejects(settler(log, lost).copy(delivery(log), park, 'park'), /lost 2/);
    assert.deepEqual(log, ['publish q.parking', 'publish q.parking']);
  });

  it('copy: a publish the broker refused or returned, or lost with a delivery whose channel is gone too, is not tried again', async () => {
    for (const failure of ['nacked', 'unroutable', 'unencodable', 'buffer-full'] as const) {
      const log: string[] = [];
      await assert.rejects(settler(log, () => Promise.reject(new PublishError(failure, failure))).copy(delivery(log), park, 'park'), new RegExp(failure));
      assert.deepEqual(log, ['publish q.parking'], failure);
    }
    const log: string[] = [];
    const entry = delivery(log);
    const lost = (): Promise<void> => {
      entry.acks.closed = true; // the connection went: every channel with it
      return Promise.reject(new PublishError('lost', 'channel-closed'));
    };
    await assert.rejects(settler(log, lost).copy(entry, park, 'park'), /lost/);
    assert.deepEqual(log, ['publish q.parking']);
  });

  it('copy: a channel lost while the copy was confirmed is stale (the broker redelivers; it may be handled twice)', async () => {
    const log: string[] = [];
    const entry = delivery(log);
    await assert.rejects(
      settler(log, () => {
        entry.acks.closed = true;
        return Promise.resolve();
      }).copy(entry, park, 'park'),
      (err: SettleError) => err.kind === 'stale' && /copied to 'q.parking', but its channel was lost before the ack/.test(err.message),
    );
    assert.deepEqual(log, ['publish q.parking']);
  });

  it('copy: a channel gone before is stale at once, nothing published', async () => {
    const log: string[] = [];
    const entry = delivery(log);
    entry.acks.closed = true;
    await assert.rejects(settler(log).copy(entry, park, 'park'), (err: SettleError) => err.kind === 'stale');
    assert.deepEqual(log, []);
  });

  it('execute: ack and dead-letter go to the ack target; a gone channel is stale, naming the attempt', () => {
    const log: string[] = [];
    const s = settler(log);
    s.execute(delivery(log, 1), { kind: 'ack' }, 'ack');
    s.execute(delivery(log, 2), { kind: 'dead-letter' }, 'retry');
    assert.deepEqual(log, ['ack 1', 'reject 2']);
    const gone = delivery(log, 3);
    gone.acks.closed = true;
    assert.throws(() => s.execute(gone, { kind: 'ack' }, 'ack'), (err: SettleError) => err.kind === 'stale' && /attempt 1 will be repeated/.test(err.message));
  });
});

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

describe('Drain', () => {
  it('is idle at once when nothing is in flight', async () => {
    assert.equal(await new Drain(() => 0).until(1000), true);
  });

  it('waits for what is in flight to be settled, woken by a change', async () => {
    let inFlight = 2;
    const drain = new Drain(() => inFlight);
    const done = drain.until(5000);
    inFlight = 1;
    drain.changed();
    inFlight = 0;
    drain.changed();
    assert.equal(await done, true);
  });

  it('gives up after its time and says how many stay unsettled', async () => {
    const drain = new Drain(() => 3);
    assert.equal(await drain.until(10), false);
    assert.equal(await drain.stopping(Promise.resolve(), { drainMs: 10 }), 'stopping with 3 messages unsettled: the broker redelivers them');
  });

  it('does not wait when the nodes that settle stop too', async () => {
    const drain = new Drain(() => 1);
    const said = await drain.stopping(undefined, { drainMs: 60_000, settlePath: () => false });
    assert.match(said ?? '', /1 message unsettled \(the nodes that settle them are stopping too\)/);
  });
});
