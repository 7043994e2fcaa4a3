/**
 * The retry config's queue type field (issue 53) on the real broker (the suite runs against 3.10.8 and
 * 4.3.6): quorum makes the main and parking queues quorum queues that a consumer reads and retries on;
 * classic declared over a queue made before the field (no x-queue-type) is accepted, nothing else
 * changes; a type that the extra arguments contradict is refused at deploy and nothing is declared.
 */
import assert from 'node:assert/strict';
import { Broker, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, lastStatus, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

async function queueInfo(queue: string): Promise<{ type?: string; arguments?: Record<string, unknown> }> {
  return (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(queue)}?columns=type,arguments`)).json()) as { type?: string; arguments?: Record<string, unknown> };
}

describe('retry config: the queue type field (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('qtype');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → function: retry the first attempt, ack the next; returns what the consumer sent. */
  async function load(config: Record<string, unknown>): Promise<Msg[]> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', ...config }),
      consumerNode([['decide', 'seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: "if (msg.retry.attempt === 1) { msg.error = 'once'; return [null, msg]; } return [msg, null];", outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    return seen;
  }

  it('quorum: the main and parking queues are quorum queues (the retry queue keeps its own type), and a message retries and is acked on them', async () => {
    const seen = await load({ queueType: 'quorum', retryDelay: '200' });
    await broker.waitForConsumer(names.mainQueue);
    assert.equal((await queueInfo(names.mainQueue)).type, 'quorum');
    assert.equal((await queueInfo(names.parkingQueue)).type, 'quorum');
    assert.equal((await queueInfo(names.retryQueue)).type, 'classic');
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'q-1' });
    await waitFor(() => seen.length === 2, 'the message retried once, then acked');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2]);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the main queue empty');
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });

  it('classic over queues declared before the field (no x-queue-type): accepted, the same queues go on', async () => {
    const ch = await broker.ch();
    // What a configuration saved before the field declared (the dead-letter layout of one delay, no exchange of its own).
    await ch.assertQueue(names.mainQueue, { durable: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': names.retryQueue } });
    await ch.assertQueue(names.parkingQueue, { durable: true });
    const seen = await load({ queueType: 'classic', mainExchange: '', routingKeys: '', retryDelay: '200' });
    await broker.waitForConsumer(names.mainQueue);
    assert.equal((await queueInfo(names.mainQueue)).type, 'classic');
    await broker.publish('', names.mainQueue, { n: 2 }, { messageId: 'c-1' });
    await waitFor(() => seen.length === 2, 'the message retried once, then acked');
    assert.deepEqual(errorsOf('config'), []);
  });

  it('refuses a type the extra arguments contradict at deploy: the config says both, the consumer does not start, nothing is declared', async () => {
    await load({ queueType: 'classic', mainQueueArgs: '{"x-queue-type":"quorum"}' });
    await waitFor(() => errorsOf('config').length > 0, 'the configuration refused');
    assert.match(errorsOf('config')[0]!, /main queue argument x-queue-type is "quorum" but the queue type field says classic: choose one/);
    await waitFor(() => lastStatus('consumer')?.fill === 'red', 'the consumer red');
    assert.equal(await broker.exists('queue', names.mainQueue), false);
  });
});
