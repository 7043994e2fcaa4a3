/**
 * Acks and dead-letter nacks are written per event-loop turn as multiple frames (AckBatcher in src/lib/settle/settler.ts).
 * On the real broker: a multiple frame never settles a message the flow still holds nor one of the
 * other kind, and settles given before a stop are written before the channel closes (nothing acked
 * comes back).
 */
import assert from 'node:assert/strict';
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
