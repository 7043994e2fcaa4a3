/**
 * Acks and dead-letter nacks are written per event-loop turn as multiple frames (AckBatcher in src/lib/settle/settler.ts).
 * On the real broker: a multiple frame never settles a message the flow still holds nor one of the
 * other kind, settles given before a stop are written before the channel closes (nothing acked
 * comes back), and a classic main queue's dead-letters go as multiple nacks on every version (run this
 * file on 3.10, 4.0 and 4.3).
 */
import assert from 'node:assert/strict';
import type { Channel, Message } from 'amqplib';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

describe('ack batching (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('acks');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  it('acks everything around a held message but never the held one, and writes its acks before a stop', async () => {
    const total = 40;
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      // The first message is held (never settled) while every later one is acked.
      consumerNode([['hold']], { prefetch: String(total), settleTimeout: '600' }),
      { id: 'hold', type: 'function', z: 'flow', func: "return msg.amqp.properties.correlationId === 'held' ? null : msg;", outputs: 1, wires: [['ack']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 0 }, { correlationId: 'held' });
    for (let n = 1; n < total; n += 1) await broker.publish(names.mainExchange, names.routingKey, { n }, { correlationId: `c-${n}` });
    await waitFor(() => sessionOf().stats.acked === total - 1, `${total - 1} acks from the flow`);

    // Stopping the consumer returns what is unsettled: exactly the held message.
    await helper.unload();
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) >= 1, 'the held message back in the queue');
    const back: unknown[] = [];
    while ((await broker.messageCount(names.mainQueue)) > 0) back.push((await broker.take(names.mainQueue)).properties.correlationId);
    assert.deepEqual(back, ['held']);
  });

  // Issue 52, item 7: one reject per dead-letter had cost the retry path a tenth of its throughput.
  it('a classic main queue: the retries of one turn are dead-lettered with one multiple nack, each with the x-death of one rejection', async () => {
    const total = 30;
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryDelay: '600000' }),
      consumerNode([['gather']], { prefetch: String(total), settleTimeout: '600' }),
      // Every msg is held until all have arrived, then all go on at once: their retries are settled in one turn.
      {
        id: 'gather',
        type: 'function',
        z: 'flow',
        func: `const held = context.get('held') || []; held.push(msg); context.set('held', held); return held.length === ${total} ? [held] : null;`,
        outputs: 1,
        wires: [['retry']],
      },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    const frames = await countDeadLetterFrames(broker);
    try {
      for (let n = 0; n < total; n += 1) await broker.publish(names.mainExchange, names.routingKey, { n }, { correlationId: `c-${n}` });
      await waitFor(async () => (await broker.messageCount(names.retryQueue)) === total, 'every message in the retry queue');
    } finally {
      frames.restore();
    }
    assert.equal(sessionOf().stats.retried, total);
    // One reject per message would be `total` frames; the nack covers them all (a second if the flow split the turn).
    assert.ok(frames.sent.length <= 2, `dead-letter frames: ${frames.sent.join(', ')}`);
    assert.ok(frames.sent.every((frame) => frame.startsWith('nack')), frames.sent.join(', '));
    for (let n = 0; n < total; n += 1) {
      const message = await broker.take(names.retryQueue);
      const deaths = message.properties.headers?.['x-death'] ?? [];
      assert.deepEqual(deaths.map((death) => [death.queue, death.reason, death.count]), [[names.mainQueue, 'rejected', 1]]);
    }
  });

  it('acks and retries mixed in one burst: each retried message is dead-lettered once, each acked one is gone, the held one stays', async () => {
    const total = 40;
    await loadFlow([
      tab(),
      brokerNode(),
      // A long retry delay keeps the retried messages in the retry queue, where they are counted.
      configNode(names, { retryDelay: '600000' }),
      consumerNode([['route']], { prefetch: String(total), settleTimeout: '600' }),
      {
        id: 'route',
        type: 'function',
        z: 'flow',
        func: "if (msg.amqp.properties.correlationId === 'held') return null; return msg.payload.n % 3 === 0 ? [null, msg] : [msg, null];",
        outputs: 2,
        wires: [['ack'], ['retry']],
      },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    // Paused while the queue fills, so the messages arrive in one burst and are settled in few turns:
    // runs of acks and dead-letters below the held message go out as multiple frames.
    await sessionOf().pause();
    for (let n = 1; n < total; n += 1) await broker.publish(names.mainExchange, names.routingKey, { n }, { correlationId: n === 20 ? 'held' : `c-${n}` });
    await sessionOf().resume();
    const retried = Array.from({ length: total - 1 }, (_, i) => i + 1).filter((n) => n % 3 === 0 && n !== 20);
    await waitFor(() => sessionOf().stats.acked + sessionOf().stats.retried === total - 2, 'every message but the held one settled');
    assert.equal(sessionOf().stats.retried, retried.length);
    await waitFor(async () => (await broker.messageCount(names.retryQueue)) === retried.length, 'the retried messages in the retry queue');

    await helper.unload();
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) >= 1, 'the held message back in the queue');
    const back: unknown[] = [];
    while ((await broker.messageCount(names.mainQueue)) > 0) back.push((await broker.take(names.mainQueue)).properties.correlationId);
    assert.deepEqual(back, ['held']);
    const inRetry: number[] = [];
    while ((await broker.messageCount(names.retryQueue)) > 0) inRetry.push((JSON.parse((await broker.take(names.retryQueue)).content.toString()) as { n: number }).n);
    assert.deepEqual(inRetry, retried);
  });
});

type Settles = Pick<Channel, 'nack' | 'reject'>;

/** Records the dead-letter frames (nack or reject without requeue) every amqplib channel of this process writes, until `restore()`. */
async function countDeadLetterFrames(broker: Broker): Promise<{ sent: string[]; restore(): void }> {
  // amqplib's Channel class: the broker's and the package's channels are of it (one copy of amqplib).
  const proto = Object.getPrototypeOf(await broker.ch()) as Settles;
  const { nack, reject } = proto;
  const sent: string[] = [];
  proto.nack = function (this: Channel, message: Message, allUpTo?: boolean, requeue?: boolean) {
    if (requeue === false) sent.push(`nack ${message.fields.deliveryTag}${allUpTo ? ' multiple' : ''}`);
    nack.call(this, message, allUpTo, requeue);
  };
  proto.reject = function (this: Channel, message: Message, requeue?: boolean) {
    if (requeue === false) sent.push(`reject ${message.fields.deliveryTag}`);
    reject.call(this, message, requeue);
  };
  return {
    sent,
    restore: () => Object.assign(proto, { nack, reject }),
  };
}
