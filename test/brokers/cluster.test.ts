/**
 * Cluster failover on a real 3-node RabbitMQ cluster this test brings up itself
 * (scripts/rabbitmq-cluster.sh, AMQP 5681-5683): a quorum main queue, the consumer running, the node
 * it is connected to stopped → it consumes again from another node, and nothing is lost.
 */
import assert from 'node:assert/strict';
import * as amqp from 'amqplib';
import { waitFor } from '../helpers/broker';
import { configNode, consumerNode, tab, uniqueNames } from '../helpers/flows';
import { helper, loadFlow, statusTexts } from '../helpers/node-red';
import { script } from '../helpers/private-broker';

const CLUSTER = 'cluster7';
const FIRST_PORT = 5681;
const PORTS = [FIRST_PORT, FIRST_PORT + 1, FIRST_PORT + 2];
const url = (port: number): string => `amqp://guest:guest@127.0.0.1:${port}`;

type Msg = Record<string, any>;

describe('cluster failover (own 3-node RabbitMQ cluster)', function () {
  this.timeout(240_000);

  before(async () => {
    await script('rabbitmq-cluster.sh', ['up', CLUSTER, String(FIRST_PORT)]);
  });

  after(async () => {
    await helper.unload();
    await script('rabbitmq-cluster.sh', ['down', CLUSTER]);
  });

  it('consumes again from another node when its node stops: lost = 0', async () => {
    const names = uniqueNames('cluster');
    const quorum = '{"x-queue-type":"quorum"}';
    await loadFlow([
      tab(),
      // Several URLs: the nodes of the cluster, the first that answers is used.
      { id: 'broker', type: 'retry-broker', name: 'cluster', url: PORTS.map(url).join(', '), heartbeat: '5', reconnectMax: '5' },
      configNode(names, { retryExchange: '', mainQueueArgs: quorum, retryQueueArgs: quorum, parkingQueueArgs: quorum }),
      consumerNode([['seen', 'ack']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const processed = new Set<string>();
    helper.getNode('seen').on('input', (msg: Msg) => processed.add(String(msg.amqp.properties.messageId)));
    const connection = (helper.getNode('broker') as unknown as { connection: { state: { phase: string; address?: string } } }).connection;
    await waitFor(() => /in flight/.test(statusTexts('consumer').at(-1) ?? ''), 'the consumer consuming');
    const first = connection.state.address;
    assert.equal(first, `127.0.0.1:${FIRST_PORT}`, 'the first node that answers');

    // The producer uses the last node, which stays up.
    const producer = await amqp.connect(url(PORTS[2]!));
    producer.on('error', () => undefined);
    const channel = await producer.createConfirmChannel();
    const published: string[] = [];
    let stopPublishing = false;
    const publishing = (async () => {
      for (let i = 0; !stopPublishing || i < 200; i += 1) {
        const id = `m-${i}`;
        channel.publish(names.mainExchange, names.routingKey, Buffer.from(JSON.stringify({ i })), { messageId: id, persistent: true, contentType: 'application/json' });
        await channel.waitForConfirms();
        published.push(id);
        if (i >= 400) break;
      }
    })();
    try {
      await waitFor(() => processed.size >= 50, 'the first messages processed');
      await script('rabbitmq-node.sh', ['stop', `${CLUSTER}-1`]);
      await waitFor(() => connection.state.phase === 'connected' && connection.state.address !== first, 'the consumer connected to another node', 60_000);
      stopPublishing = true;
      await publishing;
      await waitFor(() => published.every((id) => processed.has(id)), 'every published message processed', 60_000).catch(() => undefined);
      const lost = published.filter((id) => !processed.has(id));
      assert.deepEqual(lost, [], `published ${published.length}, processed ${processed.size} distinct, lost ${lost.length}`);
      const ch = await producer.createChannel();
      await waitFor(async () => (await ch.checkQueue(names.mainQueue)).messageCount === 0, 'the main queue empty: every message acked');
      assert.match(statusTexts('consumer').at(-1) ?? '', /in flight/);
    } finally {
      stopPublishing = true;
      await publishing.catch(() => undefined);
      await producer.close().catch(() => undefined);
    }
  });
});
