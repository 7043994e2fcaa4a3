/**
 * The retry mover (quorum retry tiers): retries come back to the main queue through the package, with
 * confirms, not by the tier's TTL dead-lettering (at most once on quorum queues). The tiers' TTL is
 * delay + 60 s here, so a retry back within the tests' 30 s waits was brought by the mover.
 * Runs on RabbitMQ 3.x and 4.x alike (the suite runs against both).
 */
import assert from 'node:assert/strict';
import { Broker, closeConnectionsNamed, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, TEST_BROKER_NAME, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

const QUORUM = '{"x-queue-type":"quorum"}';

describe('retry mover on quorum retry queues (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('mover');
    broker.track('queue', names.mainQueue, names.retryQueue, `${names.retryQueue}.200ms`, `${names.retryQueue}.400ms`, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → function(code) → [ack, retry]; returns what the consumer sent. */
  async function load(code: string, config: Record<string, unknown>): Promise<Msg[]> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', mainQueueArgs: QUORUM, retryQueueArgs: QUORUM, ...config }),
      consumerNode([['decide', 'seen']], { prefetch: '50' }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: code, outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    return seen;
  }

  async function unacked(queue: string): Promise<number> {
    const info = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(queue)}?columns=messages_unacknowledged`)).json()) as { messages_unacknowledged?: number };
    return info.messages_unacknowledged ?? 0;
  }

  it('declares the quorum tiers with TTL = delay + 60 s and brings each retry back through the mover; attempts count; parked at the end', async () => {
    const seen = await load("msg.error = 'still failing'; return [null, msg];", { retryDelay: '200, 400', maxAttempts: '4' });
    const args = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(`${names.retryQueue}.200ms`)}`)).json()) as { arguments: Record<string, unknown> };
    assert.equal(args.arguments['x-message-ttl'], 60_200);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'm-1', headers: { origin: 'test' } });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after 4 attempts');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2, 3, 4]);
    for (const m of seen.slice(1)) {
      // Moved by the package: no broker dead-letter (`expired`) on the way, every header kept.
      assert.equal(m.retry.firstDeathReason, null);
      assert.equal(m.amqp.headers.origin, 'test');
      assert.equal(typeof m.amqp.headers['retry-not-before'], 'number');
      assert.equal(m.amqp.properties.messageId, 'm-1');
    }
    const parked = await broker.take(names.parkingQueue);
    assert.match(String(parked.properties.headers?.['park-reason']), /^max attempts \(4\) reached/);
    assert.equal(await broker.messageCount(`${names.retryQueue}.200ms`), 0);
    assert.equal(await broker.messageCount(`${names.retryQueue}.400ms`), 0);
  });

  it('the connection closed while the mover holds retries: none is lost, each comes back once due', async () => {
    const count = 20;
    // Fails on the first attempt, succeeds on the second.
    const seen = await load("if (msg.retry.attempt === 1) { msg.error = 'first try'; return [null, msg]; } return [msg, null];", { retryDelay: '10000', maxAttempts: '3' });
    for (let i = 0; i < count; i += 1) await broker.publish(names.mainExchange, names.routingKey, { i }, { messageId: `m-${i}` });
    // Held for 10 s: the management API's figures lag up to 5 s.
    await waitFor(async () => (await unacked(names.retryQueue)) === count, `the mover holding all ${count} retries`);
    await closeConnectionsNamed(`node-red ${TEST_BROKER_NAME}`);
    await waitFor(() => seen.filter((m) => m.retry.attempt === 2).length >= count, 'every retry back for its second attempt');
    const second = new Set(seen.filter((m) => m.retry.attempt === 2).map((m) => String(m.amqp.properties.messageId)));
    assert.equal(second.size, count);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && (await broker.messageCount(names.retryQueue)) === 0, 'queues drained');
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });
});
