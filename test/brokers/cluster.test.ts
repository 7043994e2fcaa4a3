/**
 * Cluster failover on a real 3-node RabbitMQ cluster this test brings up itself
 * (scripts/rabbitmq-cluster.sh, AMQP 5681-5683): a quorum main queue, the consumer running, the node
 * it is connected to stopped → it consumes again from another node, and nothing is lost. And the retry
 * config's warning at deploy for classic main and parking queues on a cluster (issue 53).
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

  it('warns at deploy about classic main and parking queues on the cluster, naming its 3 nodes; not with queue type quorum', async () => {
    const warnings = (): string[] => helper.log().args.filter(([entry]) => entry.level === 30 && entry.id === 'config').map(([entry]) => String(entry.msg));
    const flow = (queueType: string, names: ReturnType<typeof uniqueNames>): Array<Record<string, unknown>> => [
      tab(),
      { id: 'broker', type: 'retry-broker', name: 'cluster', url: url(FIRST_PORT), heartbeat: '5', reconnectMax: '5', managementUrl: `http://127.0.0.1:${FIRST_PORT + 10000}` },
      configNode(names, { retryExchange: '', queueType }),
      consumerNode([['ack']]),
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ];
    const classic = uniqueNames('clusterclassic');
    await loadFlow(flow('classic', classic));
    await waitFor(() => warnings().length > 0, 'the classic-queue warning');
    assert.match(warnings()[0]!, /the broker is a cluster of 3 nodes \([^)]*cluster7-1[^)]*cluster7-2[^)]*cluster7-3[^)]*\), but \S+\.main-queue, \S+\.parking-queue are classic queues/);
    // The dialog's Check topology says it too (the endpoint the button posts to).
    const check = async (queueType: string): Promise<{ classicOnCluster?: { queues: string[]; nodes: string[] } }> => {
      const [, broker, config] = flow(queueType, classic);
      const response = await helper.request().post('/rabbitmq-retry/check-topology').send({ config, broker, credentials: { user: 'guest', password: 'guest' } });
      assert.equal(response.status, 200, response.text);
      return JSON.parse(response.text) as { classicOnCluster?: { queues: string[]; nodes: string[] } };
    };
    assert.deepEqual((await check('classic')).classicOnCluster?.queues, [classic.mainQueue, classic.parkingQueue]);
    assert.equal((await check('classic')).classicOnCluster?.nodes.length, 3);
    assert.equal((await check('quorum')).classicOnCluster, undefined);
    await helper.unload();
    const quorum = uniqueNames('clusterquorum');
    await loadFlow(flow('quorum', quorum));
    await waitFor(() => /in flight/.test(statusTexts('consumer').at(-1) ?? ''), 'the consumer consuming');
    assert.deepEqual(warnings(), []);
    await helper.unload();
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
