import assert from 'node:assert/strict';
import type { Message } from 'amqplib';
import { PublishError } from '../../../src/lib/publish';
import { AckBatcher, type AckChannel, Settler, SettleError, type CopyDecision } from '../../../src/lib/settle';
import type { DeadLetterFrame } from '../../../src/lib/topology';
import { delivery } from '../fixtures/tracked-delivery';

/** A channel that records what would go to the broker, and a scheduler the test runs by hand; dead-letters as `deadLetters` says (a reject each by default). */
function setup(deadLetters?: DeadLetterFrame) {
  const sent: string[] = [];
  let throwOnAck = false;
  const channel: AckChannel = {
    ack: (m: Message, allUpTo?: boolean) => {
      if (throwOnAck) throw new Error('Channel closed');
      sent.push(`ack ${m.fields.deliveryTag}${allUpTo ? ' multiple' : ''}`);
    },
    nack: (m: Message, allUpTo?: boolean, requeue?: boolean) => {
      sent.push(`nack ${m.fields.deliveryTag}${allUpTo ? ' multiple' : ''}${requeue ? ' requeue' : ''}`);
    },
    reject: (m: Message, requeue?: boolean) => {
      sent.push(`reject ${m.fields.deliveryTag}${requeue ? ' requeue' : ''}`);
    },
    nackAll: (requeue?: boolean) => {
      sent.push(`nack all${requeue ? ' requeue' : ''}`);
    },
  };
  const flushes: Array<() => void> = [];
  const batcher = new AckBatcher(channel, (flush) => flushes.push(flush), deadLetters);
  const endTurn = () => {
    for (const flush of flushes.splice(0)) flush();
  };
  const msg = (tag: number) => ({ fields: { deliveryTag: tag }, properties: {}, content: Buffer.alloc(0) }) as unknown as Message;
  const arrive = (...tags: number[]) => tags.map((t) => {
    const m = msg(t);
    batcher.arrived(m);
    return m;
  });
  return { sent, batcher, endTurn, arrive, failAcks: () => (throwOnAck = true), scheduled: () => flushes.length };
}

const park: CopyDecision = { kind: 'park', queue: 'q.parking', reason: 'why', options: { persistent: true } };

describe('ack batcher', () => {
  it('writes the acks of one turn as one multiple-ack when nothing below them is unsettled', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const [m1, m2, m3] = arrive(1, 2, 3, 4);
    batcher.ack(m2!);
    batcher.ack(m1!);
    batcher.ack(m3!);
    assert.deepEqual(sent, [], 'nothing is written before the end of the turn while a delivery is in flight');
    endTurn();
    assert.deepEqual(sent, ['ack 3 multiple']);
  });

  it('a batch\'s acks, in order below the next batch still unsettled: one multiple-ack of the highest', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const tags = Array.from({ length: 1000 }, (_, i) => i + 1);
    const messages = arrive(...tags);
    for (const m of messages.slice(0, 500)) batcher.ack(m);
    endTurn();
    assert.deepEqual(sent, ['ack 500 multiple']);
  });

  it('writes at once when no other delivery is in flight (prefetch 1 waits for nothing)', () => {
    const { sent, batcher, arrive, scheduled } = setup();
    const [m1] = arrive(1);
    batcher.ack(m1!);
    assert.deepEqual(sent, ['ack 1 multiple']);
    const [m2, m3] = arrive(2, 3);
    batcher.ack(m3!);
    batcher.ack(m2!);
    assert.deepEqual(sent.slice(1), ['ack 3 multiple'], 'the last settle of a burst flushes the burst');
    assert.equal(scheduled(), 1);
  });

  it('never covers an unsettled delivery: acks above it go one by one', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const [m1, m2, m3, m4] = arrive(1, 2, 3, 4, 5);
    batcher.ack(m1!);
    batcher.ack(m3!);
    batcher.ack(m4!);
    endTurn();
    assert.deepEqual(sent, ['ack 1 multiple', 'ack 3', 'ack 4']);
    batcher.ack(m2!);
    endTurn();
    assert.deepEqual(sent.slice(3), ['ack 2 multiple']);
  });

  it('a dead-letter is one reject per message at the end of the turn, before the multiple-ack that covers it; a return goes at once', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const [m1, m2, m3, m4, m5, m6, m7] = arrive(1, 2, 3, 4, 5, 6, 7, 8);
    batcher.nack(m6!, true);
    assert.deepEqual(sent, ['nack 6 requeue'], 'a hand-back (not a failure) is a nack, written at once');
    batcher.reject(m7!, true);
    assert.deepEqual(sent.slice(1), ['reject 7 requeue'], 'a failure back to the queue is a reject, written at once');
    batcher.reject(m1!, false);
    batcher.nack(m2!, false);
    batcher.ack(m3!);
    batcher.reject(m4!, false);
    batcher.ack(m5!);
    assert.equal(sent.length, 2, 'dead-letters wait for the end of the turn too');
    endTurn();
    // Below 8 (unsettled): a reject frame per dead-letter (a nack without requeue is one too), then one
    // multiple-ack for 3 and 5, which covers only what is still outstanding.
    assert.deepEqual(sent.slice(2), ['reject 1', 'reject 2', 'reject 4', 'ack 5 multiple']);
  });

  it('settles above an unsettled delivery go one by one, of either kind', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const [, m2, m3] = arrive(1, 2, 3);
    batcher.ack(m3!);
    batcher.reject(m2!, false);
    endTurn();
    assert.deepEqual(sent, ['reject 2', 'ack 3']);
  });

  it('an ack run above an unsettled delivery ends there; a dead-letter never joins it', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const [m1, m2, , m4, m5] = arrive(1, 2, 3, 4, 5, 6);
    batcher.ack(m1!);
    batcher.reject(m2!, false);
    batcher.ack(m4!);
    batcher.reject(m5!, false);
    endTurn();
    assert.deepEqual(sent, ['reject 2', 'ack 1 multiple', 'ack 4', 'reject 5']);
  });

  // Issue 52, item 7: a classic main queue dead-letters the same way from a multiple nack, at a tenth of the frames.
  describe('with nack as the dead-letter frame (a classic main queue)', () => {
    it('the dead-letters of one turn go as one multiple nack, like the acks', () => {
      const { sent, batcher, endTurn, arrive } = setup('nack');
      const ms = arrive(1, 2, 3, 4, 5, 6);
      for (const m of ms.slice(0, 5).reverse()) batcher.reject(m, false);
      assert.deepEqual(sent, [], 'they wait for the end of the turn');
      endTurn();
      assert.deepEqual(sent, ['nack 5 multiple']);
      batcher.nack(ms[5]!, false); // a nack without requeue is a dead-letter too; nothing else in flight: at once
      assert.deepEqual(sent.slice(1), ['nack 6 multiple']);
    });

    it('runs of acks and dead-letters alternate, ascending, each run one multiple frame: none covers the other kind', () => {
      const { sent, batcher, endTurn, arrive } = setup('nack');
      const [m1, m2, m3, m4, m5, m6, m7] = arrive(1, 2, 3, 4, 5, 6, 7, 8);
      batcher.ack(m4!);
      batcher.reject(m3!, false);
      batcher.ack(m1!);
      batcher.reject(m5!, false);
      batcher.ack(m2!);
      batcher.reject(m6!, false);
      batcher.ack(m7!);
      endTurn();
      // 1-2 acked, 3 dead-lettered (3 only: 1-2 are settled), 4 acked, 5-6 dead-lettered, 7 acked; 8 never covered.
      assert.deepEqual(sent, ['ack 2 multiple', 'nack 3 multiple', 'ack 4 multiple', 'nack 6 multiple', 'ack 7 multiple']);
    });

    it('above an unsettled delivery, one plain frame each; a return to the queue goes at once', () => {
      const { sent, batcher, endTurn, arrive } = setup('nack');
      const [m1, , m3, m4, m5, m6] = arrive(1, 2, 3, 4, 5, 6);
      batcher.reject(m6!, true);
      batcher.nack(m5!, true);
      assert.deepEqual(sent, ['reject 6 requeue', 'nack 5 requeue']);
      batcher.reject(m4!, false);
      batcher.reject(m1!, false);
      batcher.ack(m3!);
      endTurn();
      assert.deepEqual(sent.slice(2), ['nack 1 multiple', 'ack 3', 'nack 4']);
    });
  });

  it('handBack writes the pending settles, then returns every unsettled delivery with one nack (not counted by RabbitMQ 4.3)', () => {
    const { sent, batcher, arrive } = setup();
    const [m1, m2] = arrive(1, 2, 3, 4);
    batcher.ack(m1!);
    batcher.reject(m2!, false);
    assert.equal(batcher.handBack(), 2);
    assert.deepEqual(sent, ['reject 2', 'ack 1 multiple', 'nack all requeue']);
    assert.equal(batcher.handBack(), 0, 'nothing left to hand back');
    assert.equal(sent.length, 3);
  });

  it('schedules one flush per turn', () => {
    const { batcher, arrive, scheduled, endTurn } = setup();
    const ms = arrive(1, 2, 3, 4, 5);
    for (const m of ms.slice(0, 3)) batcher.ack(m);
    assert.equal(scheduled(), 1);
    endTurn();
    batcher.ack(ms[3]!);
    assert.equal(scheduled(), 1);
  });

  it('flush says whether it wrote', () => {
    const { batcher, arrive } = setup();
    const [m1] = arrive(1, 2);
    assert.equal(batcher.flush(), false);
    batcher.ack(m1!);
    assert.equal(batcher.flush(), true);
    assert.equal(batcher.flush(), false);
  });

  it('after the channel closed, drops pending acks and refuses new settles', () => {
    const { sent, batcher, endTurn, arrive } = setup();
    const [m1, m2] = arrive(1, 2, 3);
    batcher.ack(m1!);
    batcher.close();
    endTurn();
    assert.deepEqual(sent, []);
    assert.throws(() => batcher.ack(m2!), /Channel closed/);
    assert.throws(() => batcher.nack(m2!, false), /Channel closed/);
    assert.throws(() => batcher.nack(m2!, true), /Channel closed/);
    assert.throws(() => batcher.reject(m2!, false), /Channel closed/);
    assert.throws(() => batcher.reject(m2!, true), /Channel closed/);
    assert.equal(batcher.handBack(), 0);
  });

  it('a channel that throws on ack (closed under us) closes the batcher instead of crashing the flush', () => {
    const { batcher, endTurn, arrive, failAcks } = setup();
    const [m1, m2] = arrive(1, 2, 3);
    batcher.ack(m1!);
    failAcks();
    assert.doesNotThrow(endTurn);
    assert.throws(() => batcher.ack(m2!), /Channel closed/);
  });
});

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
