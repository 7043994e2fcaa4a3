/**
 * Issue 39, item 2: how each way a delivery goes back to its queue is counted, on the broker at AMQP_URL
 * (run this file on 3.10, 4.0 and 4.3). Since RabbitMQ 4.3 a quorum queue counts only a `basic.reject`
 * (or a channel closed with the message unacked) in `x-delivery-count`, towards its delivery limit;
 * `x-acquired-count` counts every return. 3.10 and 4.0 count every return in `x-delivery-count`.
 * - a failure that goes back (a copy that failed) is a reject: counted everywhere, so it ends at the
 *   delivery limit, in the parking queue;
 * - a hand-back that is not the message's fault (the rate limit's on a pause or an open kill switch, a
 *   stopping consumer's leftovers) is a nack: not counted on 4.3+.
 */
import assert from 'node:assert/strict';
import type { GetMessage } from 'amqplib';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

/** The broker's version as [major, minor]. */
function versionOf(broker: Broker): [number, number] {
  const version = broker.model.connection.serverProperties.version;
  const [major, minor] = version.split('.').map(Number);
  return [major ?? 0, minor ?? 0];
}

/** Whether this broker counts a nack's return in `x-delivery-count` (every version before 4.3). */
function nackCounts(broker: Broker): boolean {
  const [major, minor] = versionOf(broker);
  return major < 4 || (major === 4 && minor < 3);
}

/** The counts the broker wrote on a delivery (absent: 0). */
function counts(message: GetMessage): { delivery: number; acquired: number | undefined } {
  const headers = message.properties.headers ?? {};
  const acquired = headers['x-acquired-count'] as number | undefined;
  return { delivery: Number(headers['x-delivery-count'] ?? 0), acquired };
}

describe('settle semantics per broker version (real broker): what each return counts', function () {
  let broker: Broker;
  let names: Names;
  const quorum = '{"x-queue-type":"quorum"}';

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('settle');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** The next message of the main queue, taken with basic.get. */
  async function next(): Promise<GetMessage> {
    const ch = await broker.ch();
    let got: GetMessage | false = false;
    await waitFor(async () => (got = await ch.get(names.mainQueue)) !== false, 'a message in the main queue');
    return got as unknown as GetMessage;
  }

  it('a dead-letter retry (the main queue\'s dead-letter exchange) comes back as the next attempt', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryDelay: '200' }),
      consumerNode([['seen', 'decide']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: 'return msg.retry.attempt < 2 ? [null, msg] : [msg, null];', outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', reason: 'once', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    await broker.waitForConsumer(names.mainQueue);
    for (let i = 0; i < 3; i += 1) await broker.publish(names.mainExchange, names.routingKey, { n: i }, { messageId: `m${i}` });
    await waitFor(() => seen.length === 6, 'each message twice');
    const attempts = (id: string) => seen.filter((m) => m.amqp.properties.messageId === id).map((m) => m.retry.attempt);
    for (let i = 0; i < 3; i += 1) assert.deepEqual(attempts(`m${i}`), [1, 2]);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'all acked');
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });

  it('quorum main queue: a copy that fails goes back with a reject, counted on every version, and ends at the delivery limit in the parking queue', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', retryDelay: '200', mainQueueArgs: '{"x-queue-type":"quorum","x-delivery-limit":2}' }),
      consumerNode([['seen', 'retry']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', reason: 'failing', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    await broker.waitForConsumer(names.mainQueue);
    // The retry queue goes away under the consumer: every retry copy is unroutable (mandatory), so it fails.
    await (await broker.ch()).deleteQueue(names.retryQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'copy-fails' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the broker dead-letters it at the delivery limit', 60_000);
    const parked = await broker.take(names.parkingQueue);
    const deaths = (parked.properties.headers?.['x-death'] ?? []) as Msg[];
    assert.ok(deaths.some((d) => d.queue === names.mainQueue && d.reason === 'delivery_limit'), JSON.stringify(deaths));
    // Each reject was counted (the limit is 2: the third delivery's failure goes over it).
    assert.deepEqual(seen.map((m) => Number(m.amqp.headers['x-delivery-count'] ?? 0)), [0, 1, 2]);
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 1, 1], 'a failed copy repeats the attempt');
  });

  it('quorum main queue: a stopping consumer hands its unsettled messages back with a nack, not counted on RabbitMQ 4.3+', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', mainQueueArgs: quorum }),
      consumerNode([['seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
    ]);
    let seen = 0;
    helper.getNode('seen').on('input', () => (seen += 1));
    await broker.waitForConsumer(names.mainQueue);
    for (let i = 0; i < 3; i += 1) await broker.publish(names.mainExchange, names.routingKey, { n: i });
    await waitFor(() => seen === 3, 'three messages in the flow, never settled');
    await helper.unload(); // the whole flow stops: nothing settles them, the consumer hands them back
    const message = await next();
    const { delivery, acquired } = counts(message);
    assert.equal(message.fields.redelivered, true);
    if (nackCounts(broker)) assert.equal(delivery, 1, 'RabbitMQ before 4.3 counts every return');
    else {
      assert.equal(delivery, 0, 'not counted towards the delivery limit');
      assert.equal(acquired, 1, 'x-acquired-count counts every return');
    }
  });

  it('quorum main queue: the rate limit hands back what it holds on a pause with a nack, not counted on RabbitMQ 4.3+', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', mainQueueArgs: quorum }),
      consumerNode([['seen']], { rateLimit: '1', prefetch: '10' }),
      { id: 'seen', type: 'helper', z: 'flow' },
    ]);
    let seen = 0;
    helper.getNode('seen').on('input', () => (seen += 1));
    await broker.waitForConsumer(names.mainQueue);
    for (let i = 0; i < 6; i += 1) await broker.publish(names.mainExchange, names.routingKey, { n: i });
    const session = sessionOf();
    await waitFor(() => (session.stats.rateLimited ?? 0) > 0, 'messages held by the rate limit');
    await session.pause();
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) > 0, 'the held ones back in the queue');
    const message = await next();
    const { delivery, acquired } = counts(message);
    assert.ok(seen < 6);
    assert.equal(message.fields.redelivered, true);
    if (nackCounts(broker)) assert.equal(delivery, 1, 'RabbitMQ before 4.3 counts every return');
    else {
      assert.equal(delivery, 0, 'not counted towards the delivery limit');
      assert.equal(acquired, 1, 'x-acquired-count counts every return');
    }
  });
});
