/**
 * A consumer the broker cancels (basic.cancel: the queue deleted, its leader moved, or on RabbitMQ 4.3+
 * a quorum queue's consumer timeout) is a reconnect-and-resume with a warning naming the cause it
 * found, never a silent stop; the retry mover sets an `x-consumer-timeout` it can live with on its
 * quorum tiers. Real broker.
 */
import assert from 'node:assert/strict';
import * as amqp from 'amqplib';
import { MOVER_CONSUMER_TIMEOUT_MS } from '../../src/lib/consume/retry-mover';
import { parseBrokerVersion, versionAtLeast } from '../../src/lib/topology';
import { AMQP_URL, Broker, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';
import { skipBecause } from '../helpers/skips';

type Msg = Record<string, any>;

async function serverVersion(): Promise<string> {
  const model = await amqp.connect(AMQP_URL);
  try {
    return model.connection.serverProperties.version;
  } finally {
    await model.close();
  }
}

const DELETED_STATUS = 'node-red-contrib-rabbitmq-retry/retry-consumer:retry-consumer.status.cancelledDeleted';

describe('a consumer the broker cancels (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('cancel');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  function capture(id: string, method: 'warn' | 'status' | 'error'): unknown[] {
    const calls: unknown[] = [];
    helper.getNode(id).on(`call:${method}`, (call: { args: unknown[] }) => calls.push(call.args[0]));
    return calls;
  }

  it("RabbitMQ 4.3+: a quorum queue's consumer timeout cancels the consumer; it warns, says so in its status, consumes again, and the held message comes back", async function () {
    const version = await serverVersion();
    const parsed = parseBrokerVersion(version);
    if (!parsed || !versionAtLeast(parsed, 4, 3)) skipBecause(this, `the broker at AMQP_URL is RabbitMQ ${version}: consumer timeouts that cancel a quorum queue's consumer need 4.3 or later (the 4.3 leg of .ci/run)`);
    await loadFlow([
      tab(),
      brokerNode(),
      // The queue's own consumer timeout (a queue argument 4.3 honours per consumer), short: the first delivery is held past it.
      configNode(names, { retryExchange: '', mainQueueArgs: '{"x-queue-type":"quorum","x-consumer-timeout":1500}' }),
      consumerNode([['hold']]),
      { id: 'hold', type: 'function', z: 'flow', func: "const n = (context.get('n') || 0) + 1; context.set('n', n); return n === 1 ? null : msg;", wires: [['seen', 'ack']] },
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const warnings = capture('consumer', 'warn');
    const statuses = capture('consumer', 'status') as Array<{ text?: string }>;
    const errors = capture('consumer', 'error');
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { held: true });
    await waitFor(() => seen.length === 1, `the held message delivered again after the cancel; warnings: ${warnings.join(' / ')}`);
    // The cause, with the queue's timeout: a message held past it (issue 52, item 4).
    const said = `the broker cancelled the consumer of queue '${names.mainQueue}': a message was held unsettled longer than its consumer timeout of 1500ms; its unsettled messages go back to the queue; consuming again`;
    assert.ok(warnings.includes(said), `warnings: ${warnings.join(' / ')}`);
    assert.ok(statuses.some((s) => s.text === 'consumer timeout 1500ms · consuming again'), `statuses: ${JSON.stringify(statuses)}`);
    assert.deepEqual(errors, []);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && (await broker.consumerCount(names.mainQueue)) === 1, 'the message acked, one consumer');
  });

  for (const type of ['classic', 'quorum'] as const) {
    it(`a ${type} main queue deleted under the consumer: the warning and the status say deleted (not the three possible causes), and declare mode declares it again`, async () => {
      await loadFlow([
        tab(),
        brokerNode(),
        configNode(names, type === 'quorum' ? { retryExchange: '', mainQueueArgs: '{"x-queue-type":"quorum"}' } : {}),
        consumerNode([['ack']]),
        { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      ]);
      const warnings = capture('consumer', 'warn');
      const statuses = capture('consumer', 'status') as Array<{ fill?: string; text?: string }>;
      await broker.waitForConsumer(names.mainQueue);
      await (await broker.ch()).deleteQueue(names.mainQueue);
      const said = `the broker cancelled the consumer of queue '${names.mainQueue}': the queue was deleted (its messages with it); declaring it again`;
      // RabbitMQ 4.3 cancels a quorum queue's consumer a few ms before the queue is gone: the check looks again.
      await waitFor(() => warnings.includes(said), `the deleted queue named; warnings: ${warnings.join(' / ')}`);
      assert.ok(statuses.some((s) => s.text === DELETED_STATUS && s.fill === 'red'), `statuses: ${JSON.stringify(statuses)}`);
      await waitFor(async () => (await broker.consumerCount(names.mainQueue).catch(() => 0)) === 1, 'the consumer back on the queue declared again');
    });
  }

  it(`the retry mover consumes its quorum tiers with x-consumer-timeout ${MOVER_CONSUMER_TIMEOUT_MS} ms (twice the longest hold), on every version`, async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', mainQueueArgs: '{"x-queue-type":"quorum"}', retryQueueArgs: '{"x-queue-type":"quorum"}' }),
      consumerNode([['ack']]),
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    let consumers: Array<{ arguments?: Record<string, unknown> }> = [];
    await waitFor(async () => {
      const queue = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(names.retryQueue)}`)).json()) as { consumer_details?: typeof consumers };
      consumers = queue.consumer_details ?? [];
      return consumers.length === 1;
    }, 'the mover consuming the tier (management API)');
    assert.equal(consumers[0]?.arguments?.['x-consumer-timeout'], MOVER_CONSUMER_TIMEOUT_MS);
  });
});
