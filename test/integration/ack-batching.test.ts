/**
 * Acks are written per event-loop turn as multiple-acks (src/lib/ack-batcher.ts). On the real broker:
 * a multiple-ack never settles a message the flow still holds, and acks given before a stop are
 * written before the channel closes (nothing acked comes back).
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
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
    const consumer = helper.getNode('consumer') as unknown as { session: { stats: { acked: number } } };
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 0 }, { correlationId: 'held' });
    for (let n = 1; n < total; n += 1) await broker.publish(names.mainExchange, names.routingKey, { n }, { correlationId: `c-${n}` });
    await waitFor(() => consumer.session.stats.acked === total - 1, `${total - 1} acks from the flow`);

    // Stopping the consumer returns what is unsettled: exactly the held message.
    await helper.unload();
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) >= 1, 'the held message back in the queue');
    const back: unknown[] = [];
    while ((await broker.messageCount(names.mainQueue)) > 0) back.push((await broker.take(names.mainQueue)).properties.correlationId);
    assert.deepEqual(back, ['held']);
  });
});
