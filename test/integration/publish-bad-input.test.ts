/**
 * Bad input on publish, on the real broker: each is a clear error through done(err), and the next
 * message goes through. The max_message_size case runs on a private broker node of its own (the
 * limit is broker-wide), started with test/helpers/private-node.ts.
 */
import assert from 'node:assert/strict';
import * as amqp from 'amqplib';
import { BrokerConnection } from '../../src/lib/connection/broker-connection';
import { AMQP_URL, Broker, uniqueName, waitFor } from '../helpers/broker';
import { brokerNode, tab } from '../helpers/flows';
import { helper, loadFlow, statusCalls } from '../helpers/node-red';
import { canStartPrivateNode, NO_PRIVATE_NODE, startPrivateNode, type PrivateNode } from '../helpers/private-node';
import { skipBecause } from '../helpers/skips';

type Msg = Record<string, any>;

/** A publish node wired to a capture, and what it sent or reported. */
async function loadPublisher(url: string, exchange: string, extraNodes: Array<Record<string, unknown>> = []): Promise<{ out: Msg[]; errors: string[] }> {
  await loadFlow([
    tab(),
    brokerNode({ url }),
    { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange, routingKey: '', persistent: true, wires: [['out']] },
    { id: 'out', type: 'helper', z: 'flow' },
    ...extraNodes,
  ]);
  const out: Msg[] = [];
  const errors: string[] = [];
  helper.getNode('out').on('input', (m: Msg) => out.push(m));
  for (const id of ['pub', ...extraNodes.map((n) => String(n.id))]) helper.getNode(id).on('call:error', (c: { args: unknown[] }) => errors.push(String(c.args[0])));
  return { out, errors };
}

/** Sends a msg and waits for its outcome: the error text, or undefined when it was published. */
async function outcome(io: { out: Msg[]; errors: string[] }, msg: Msg, node = 'pub'): Promise<string | undefined> {
  const before = { out: io.out.length, errors: io.errors.length };
  helper.getNode(node).receive(msg);
  await waitFor(() => io.out.length > before.out || io.errors.length > before.errors, 'the publish outcome');
  return io.errors.length > before.errors ? io.errors[io.errors.length - 1] : undefined;
}

describe('publish: bad input is a clear error and the next message goes through (real broker)', function () {
  let broker: Broker;
  let exchange: string;
  let queue: string;

  beforeEach(async () => {
    broker = await Broker.open();
    exchange = uniqueName('bad-input-x');
    queue = uniqueName('bad-input-q');
    broker.track('exchange', exchange, `${exchange}.later`);
    broker.track('queue', queue);
    const ch = await broker.ch();
    await ch.assertExchange(exchange, 'direct', { durable: false });
    await ch.assertQueue(queue, { durable: false });
    await ch.bindQueue(queue, exchange, 'rk');
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  it('a payload that cannot be encoded, headers AMQP cannot carry, an empty routing key on a direct exchange', async () => {
    const io = await loadPublisher(AMQP_URL, exchange);
    const circular: Record<string, unknown> = { n: 1 };
    circular.self = circular;
    const bad: Array<[Msg, RegExp]> = [
      [{ topic: 'rk', payload: circular }, /msg.payload cannot be encoded as JSON: Converting circular structure to JSON/],
      [{ topic: 'rk', payload: { n: 10n } }, /msg.payload cannot be encoded as JSON: Do not know how to serialize a BigInt/],
      [{ topic: 'rk', payload: 1, properties: { headers: { when: new Date() } } }, /msg.properties: headers.when is a Date/],
      [{ topic: 'rk', payload: 1, properties: { headers: { id: 10n } } }, /msg.properties: headers.id is a bigint/],
      [{ topic: 'rk', payload: 1, properties: { correlationId: 'c'.repeat(300) } }, /msg.properties: property correlationId is longer than 255 bytes/],
      [{ topic: '', payload: 1 }, new RegExp(`returned unroutable: no queue is bound for exchange '${exchange}' with routing key '' \\(the routing key is empty`)],
    ];
    let good = 0;
    for (const [msg, expected] of bad) {
      assert.match(String(await outcome(io, msg)), expected);
      assert.equal(await outcome(io, { topic: 'rk', payload: { good: (good += 1) } }), undefined);
    }
    await waitFor(async () => (await broker.messageCount(queue)) === good, 'every good message in the queue');
  });

  it('a failed publish shows on the status (red ring, short reason) until the next one succeeds', async () => {
    const io = await loadPublisher(AMQP_URL, exchange);
    const statuses = (): Array<{ fill?: string; shape?: string; text?: string }> => statusCalls().filter((c) => c.id === 'pub').map((c) => c.status);
    assert.match(String(await outcome(io, { topic: 'nobody.listens', payload: 1 })), /returned unroutable/);
    assert.deepEqual(statuses().at(-1), { fill: 'red', shape: 'ring', text: 'publish failed: no route (mandatory)' });
    assert.equal(await outcome(io, { topic: 'rk', payload: 2 }), undefined);
    assert.notEqual(statuses().at(-1)?.fill, 'red', 'the broker status is back at the success');
    // The broker's coalesced buffer update (the failed publish left it) follows within its interval.
    await waitFor(() => statuses().at(-1)?.fill === 'green', 'the broker status, green again');
    await helper.unload();
    const missing = await loadPublisher(AMQP_URL, `${exchange}.missing`);
    assert.match(String(await outcome(missing, { topic: 'rk', payload: 3 })), /404 NOT_FOUND/);
    assert.deepEqual(statuses().at(-1), { fill: 'red', shape: 'ring', text: `publish failed: exchange '${exchange}.missing' does not exist` });
  });

  it('an unknown exchange: the error names it, and once it exists the same node publishes again', async () => {
    const later = `${exchange}.later`;
    const io = await loadPublisher(AMQP_URL, later);
    assert.match(String(await outcome(io, { topic: 'rk', payload: 1 })), new RegExp(`exchange '${later}' does not exist \\(404 NOT_FOUND`));
    assert.match(String(await outcome(io, { topic: 'rk', payload: 2 })), /does not exist \(404 NOT_FOUND/);
    const ch = await broker.ch();
    await ch.assertExchange(later, 'direct', { durable: false });
    await ch.bindQueue(queue, later, 'rk');
    assert.equal(await outcome(io, { topic: 'rk', payload: 3 }), undefined);
    assert.deepEqual(JSON.parse((await broker.take(queue)).content.toString()), 3);
  });

  it('the library publisher: headers amqplib cannot encode fail that publish only, the channel stays usable', async () => {
    const connection = new BrokerConnection({ url: AMQP_URL, connectionName: 'bad-input test', reconnect: { initialMs: 1000, maxMs: 1000 } });
    connection.acquire('test');
    try {
      const publisher = connection.publisher('test');
      await publisher.publish(exchange, 'rk', Buffer.from('1'));
      const channel = connection.publishers.current('test');
      assert.ok(channel);
      await assert.rejects(publisher.publish(exchange, 'rk', Buffer.from('2'), { headers: { n: 10n } }), (err: Error & { failure?: string }) => {
        assert.equal(err.failure, 'unencodable');
        assert.match(err.message, /cannot encode the message's properties or headers: .*bigint/);
        return true;
      });
      assert.equal(channel.closed, false);
      await publisher.publish(exchange, 'rk', Buffer.from('3'));
      assert.equal(connection.publishers.current('test'), channel);
      assert.equal((await broker.take(queue)).content.toString(), '1');
      assert.equal((await broker.take(queue)).content.toString(), '3');
    } finally {
      await connection.release('test');
    }
  });
});

describe('publish: a message above the broker max_message_size (private broker node)', function () {
  const queue = uniqueName('too-big');
  let node: PrivateNode | undefined;
  this.timeout(120_000);

  before(async function () {
    if (!canStartPrivateNode()) {
      // The limit is broker-wide: never lowered on the shared broker.
      skipBecause(this, NO_PRIVATE_NODE);
    }
    node = await startPrivateNode('ops8-size', { extraConf: 'max_message_size = 4096' });
  });

  after(async () => {
    await helper.unload();
    node?.reset();
  });

  it('is an error naming both sizes, and the next message goes through', async () => {
    const model = await amqp.connect(node!.url);
    const ch = await model.createChannel();
    await ch.assertQueue(queue, { durable: false });
    const io = await loadPublisher(node!.url, '');
    assert.match(String(await outcome(io, { topic: queue, payload: Buffer.alloc(5000) })), /a message of 5000 bytes is larger than the broker's max_message_size of 4096 bytes \(406/);
    assert.equal(await outcome(io, { topic: queue, payload: Buffer.alloc(4000) }), undefined);
    assert.equal((await ch.checkQueue(queue)).messageCount, 1);
    await model.close();
  });
});
