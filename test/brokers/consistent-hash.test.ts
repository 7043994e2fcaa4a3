/**
 * Issue 42: partitioned ordered mode through RabbitMQ's consistent-hash exchange, on a node this test
 * starts with the plugin rabbitmq_consistent_hash_exchange enabled (the shared brokers do not have it,
 * and are never reconfigured). Routing `consistent-hash` declares an `x-consistent-hash` partition
 * exchange; each key reaches one partition, in order. Routing `auto` takes computed there too (issue 53:
 * it spreads keys more evenly): a direct partition exchange bound by number.
 */
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/broker';
import { configNode, tab, uniqueNames } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';
import { canStartPrivateNode, NO_PRIVATE_NODE, startPrivateNode, type PrivateNode } from '../helpers/private-node';
import { skipBecause } from '../helpers/skips';

type Msg = Record<string, any>;
const PARTITIONS = 4;

describe('partitioned ordered mode through the consistent-hash exchange (own RabbitMQ node with the plugin)', function () {
  this.timeout(180_000);
  let node: PrivateNode | undefined;

  before(async function () {
    if (!canStartPrivateNode()) skipBecause(this, NO_PRIVATE_NODE);
    node = await startPrivateNode('chash', { plugins: ['rabbitmq_consistent_hash_exchange'] });
  });

  after(async () => {
    await helper.unload();
    node?.reset();
  });

  async function api(path: string): Promise<Record<string, any>> {
    const response = await fetch(`${node!.management}/api/${path}`, { headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` } });
    return (await response.json()) as Record<string, any>;
  }

  it('consistent-hash routing: an x-consistent-hash exchange, each key in one partition, in publish order', async () => {
    const names = uniqueNames('chash');
    // The management API answers a little after AMQP on a fresh node.
    await waitFor(async () => (await api('overview').catch((): Record<string, any> => ({}))).exchange_types !== undefined, 'the management API');
    await loadFlow([
      tab(),
      { id: 'broker', type: 'retry-broker', name: 'chash broker', url: node!.url, heartbeat: '30', managementUrl: node!.management },
      configNode(names, { mainExchange: '', routingKeys: '', retryExchange: '', partitions: String(PARTITIONS), partitionRouting: 'consistent-hash' }),
      { id: 'consumer', type: 'retry-consumer', z: 'flow', config: 'config', mode: 'ordered', orderedPause: '0.2', settleTimeout: '60', decode: 'auto', invalidBody: 'park', wires: [['seen', 'ack']] },
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', partitions: 'config', key: 'key', keyType: 'msg', wires: [['published']] },
      { id: 'published', type: 'helper', z: 'flow' },
    ]);
    const seen: Msg[] = [];
    const published: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    helper.getNode('published').on('input', (msg: Msg) => published.push(msg));
    const exchange = `exchanges/%2F/${encodeURIComponent(`${names.mainQueue}.partitions`)}`;
    const bindingsNow = async (): Promise<Array<{ destination: string; routing_key: string }>> => {
      const answer = (await api(`${exchange}/bindings/source`)) as unknown;
      return Array.isArray(answer) ? (answer as Array<{ destination: string; routing_key: string }>) : [];
    };
    await waitFor(async () => (await bindingsNow()).length === PARTITIONS, 'every partition bound');
    assert.equal((await api(exchange)).type, 'x-consistent-hash');
    const bindings = await bindingsNow();
    assert.deepEqual(bindings.map((b) => [b.destination, b.routing_key]).sort(), Array.from({ length: PARTITIONS }, (_, i) => [`${names.mainQueue}.${i}`, '1']));

    const keys = Array.from({ length: 40 }, (_, k) => `customer-${k}`);
    const pub = helper.getNode('pub') as unknown as { receive(msg: Msg): void };
    for (let n = 1; n <= 5; n++) for (const key of keys) pub.receive({ key, payload: { key, n } });
    await waitFor(() => published.length === 200, 'every publish confirmed');
    assert.ok(published.every((m) => m.amqp.published.routingKey === m.key && m.amqp.published.partition === undefined), 'the key is the routing key');
    await waitFor(() => seen.length === 200, 'every message consumed');

    const partitionsOf = new Map<string, Set<number>>();
    const order = new Map<string, number[]>();
    for (const msg of seen) {
      const key = msg.payload.key as string;
      partitionsOf.set(key, (partitionsOf.get(key) ?? new Set()).add(msg.amqp.partition as number));
      order.set(key, [...(order.get(key) ?? []), msg.payload.n as number]);
    }
    for (const [key, set] of partitionsOf) assert.equal(set.size, 1, `${key} in one partition`);
    assert.ok(new Set([...partitionsOf.values()].map((s) => [...s][0])).size > 1, 'the keys spread over several partitions');
    for (const [key, ns] of order) assert.deepEqual(ns, [1, 2, 3, 4, 5], `${key} in publish order`);
  });

  it('auto routing takes computed for a new partition exchange, even with the plugin: a direct exchange bound by number', async () => {
    const names = uniqueNames('chashauto');
    await helper.unload();
    await loadFlow([
      tab(),
      { id: 'broker', type: 'retry-broker', name: 'chash broker', url: node!.url, heartbeat: '30', managementUrl: node!.management },
      configNode(names, { mainExchange: '', routingKeys: '', retryExchange: '', partitions: String(PARTITIONS), partitionRouting: 'auto' }),
      { id: 'consumer', type: 'retry-consumer', z: 'flow', config: 'config', mode: 'ordered', orderedPause: '0.2', settleTimeout: '60', decode: 'auto', invalidBody: 'park', wires: [['ack']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const exchange = `exchanges/%2F/${encodeURIComponent(`${names.mainQueue}.partitions`)}`;
    await waitFor(async () => {
      const answer = (await api(`${exchange}/bindings/source`)) as unknown;
      return Array.isArray(answer) && answer.length === PARTITIONS;
    }, 'every partition bound');
    assert.equal((await api(exchange)).type, 'direct');
    const bindings = (await api(`${exchange}/bindings/source`)) as unknown as Array<{ destination: string; routing_key: string }>;
    assert.deepEqual(bindings.map((b) => [b.destination, b.routing_key]).sort(), Array.from({ length: PARTITIONS }, (_, i) => [`${names.mainQueue}.${i}`, String(i)]));
  });
});
