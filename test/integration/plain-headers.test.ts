/**
 * `msg.amqp.headers` is plain data: amqplib's typed wrappers (`{"!": "timestamp", value}`, decimals)
 * become ISO strings and numbers on msg, while a retry and a park carry the ORIGINAL headers, with
 * their AMQP types, to the broker (real broker).
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

const STAMP = { '!': 'timestamp', value: 1_700_000_000 };
const PRICE = { '!': 'decimal', value: { places: 2, digits: 1234 } };
const ISO = '2023-11-14T22:13:20.000Z';

describe('plain headers on msg, original headers on the broker (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('headers');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  it('shows timestamps as ISO strings and decimals as numbers; the retried and parked copies keep the AMQP types', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['decide', 'seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      // Attempt 1: retry; attempt 2: park.
      { id: 'decide', type: 'function', z: 'flow', func: "msg.error = 'failed'; return msg.retry.attempt === 1 ? [msg, null] : [null, msg];", outputs: 2, wires: [['retry'], ['park']] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', reason: '', wires: [[]] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { headers: { stamp: STAMP, price: PRICE, nested: { at: [STAMP] }, text: 'kept' } });
    await waitFor(() => seen.length === 2, 'the first attempt and the retry');

    const [first, second] = seen as [Msg, Msg];
    assert.deepEqual(first.amqp.headers, { stamp: ISO, price: 12.34, nested: { at: [ISO] }, text: 'kept' });
    // The retry came back through the broker: its x-death time is plain too.
    const death = (second.amqp.headers['x-death'] as Msg[])[0]!;
    assert.equal(typeof death.time, 'string');
    assert.equal(death.time, second.retry.deaths[0].time);
    assert.equal(second.amqp.headers.stamp, ISO);

    // The parked copy: the original headers with their AMQP types, not msg's view of them.
    const parked = await broker.take(names.parkingQueue);
    const headers = parked.properties.headers as Msg;
    assert.deepEqual(headers.stamp, STAMP);
    assert.deepEqual(headers.price, PRICE);
    assert.deepEqual(headers.nested, { at: [STAMP] });
    assert.equal((headers['x-death'] as Msg[])[0]!.time['!'], 'timestamp');
  });

  it('a timestamp outside Date\'s range (a forged header or x-death) is delivered and settled, and the consumer goes on', async () => {
    await loadFlow([tab(), brokerNode(), configNode(names), consumerNode([['ack', 'seen']]), { id: 'seen', type: 'helper', z: 'flow' }, { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] }]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    const far = { '!': 'timestamp', value: 1e13 }; // year ~318 000: AMQP carries it, a JavaScript Date cannot
    const death = { queue: names.mainQueue, reason: 'rejected', count: 1, exchange: names.mainExchange, 'routing-keys': [names.routingKey], time: far };
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { headers: { far, 'x-death': [death] } });
    await broker.publish(names.mainExchange, names.routingKey, { n: 2 });
    await waitFor(() => seen.length === 2, 'both messages');
    const [forged, next] = seen as [Msg, Msg];
    assert.equal(forged.amqp.headers.far, 1e13);
    assert.equal(forged.retry.attempt, 2);
    assert.equal(forged.retry.deaths[0].time, undefined);
    assert.deepEqual(next.payload, { n: 2 });
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'both acked');
  });
});
