/**
 * A Redis master failover under a consuming retry-consumer with deduplication (the real broker, a
 * private master + replica + sentinel, a private 3-master cluster): nothing is lost, and the duplicate
 * effects a failover can cause are measured, not assumed away. The replication is asynchronous: a
 * processed key the master had not passed to its replica when it died is gone on the new master, and
 * a later copy of that message is processed again. The test sends a second copy of every message
 * after the failover and counts the ones processed twice (printed; docs/deduplication.md states the
 * cause): 0 where the replica keeps up on loopback, not asserted; more than 0 where it is made to lag.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow, statusTexts } from '../helpers/node-red';
import { canCreateCluster, NO_REDIS_CLI, startPrivateCluster, startPrivateSentinel } from '../helpers/private-redis-topologies';
import { canStartPrivateRedis, NO_PRIVATE_REDIS } from '../helpers/private-stores';
import { skipBecause } from '../helpers/skips';

type Msg = Record<string, any>;

const COUNT = 300;

describe('Redis master failover under a consuming deduplicating consumer (real broker, private Redis)', function () {
  this.timeout(300_000);
  let broker: Broker;
  let names: Names;

  beforeEach(async function () {
    if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
    broker = await Broker.open();
    names = uniqueNames('redis-failover');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker?.cleanup();
  });

  /** consumer (dedupe on `url`) → a function that takes 40 ms a message (5 at a time: the failover comes mid-consumption) → ack. */
  async function consume(url: string): Promise<{ processed: Msg[]; events: Msg[] }> {
    const slow = 'setTimeout(() => node.send(msg), 40); return null;';
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      { id: 'store', type: 'retry-dedupe', kind: 'redis', url, leaseSeconds: '30' },
      consumerNode([['work', 'seen'], ['events']], { dedupe: 'store', events: true, statsEvery: '0', outputs: 2, prefetch: '5' }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'work', type: 'function', z: 'flow', func: slow, outputs: 1, wires: [['ack']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const processed: Msg[] = [];
    const events: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => processed.push(msg));
    helper.getNode('events').on('input', (msg: Msg) => events.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    return { processed, events };
  }

  /**
   * Publishes COUNT messages, fails the master over once a third are processed, waits for all, then
   * publishes a second copy of each: lost 0 is asserted; the copies processed again are returned.
   */
  async function run(url: string, failover: () => Promise<unknown>): Promise<{ processedTwice: number; duringFailover: number }> {
    const { processed, events } = await consume(url);
    await Promise.all(Array.from({ length: COUNT }, (_, i) => broker.publish(names.mainExchange, names.routingKey, { i }, { messageId: `m-${i}` })));
    await waitFor(() => processed.length >= COUNT / 3, 'a third processed');
    const before = processed.length;
    await failover();
    const ids = (): Set<string> => new Set(processed.map((m) => String(m.amqp.properties.messageId)));
    await waitFor(() => ids().size === COUNT, 'every message processed after the failover', 120_000);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the queue drained');
    // Processed more than once already (a redelivery of a message whose processed key was lost).
    const duringFailover = processed.length - COUNT;
    const firstRound = processed.length;
    await Promise.all(Array.from({ length: COUNT }, (_, i) => broker.publish(names.mainExchange, names.routingKey, { i, copy: true }, { messageId: `m-${i}` })));
    await waitFor(() => processed.length - firstRound + events.filter((e) => e.payload.event === 'duplicate').length >= COUNT, 'every second copy processed or acked as a duplicate', 120_000);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the copies drained');
    assert.ok(before < COUNT, 'the failover happened mid-consumption');
    assert.equal(await broker.messageCount(names.parkingQueue), 0, 'nothing parked');
    assert.equal(ids().size, COUNT, 'lost 0: every message processed');
    const processedTwice = processed.length - firstRound;
    // The measurement, for docs/deduplication.md: not asserted to be 0 (asynchronous replication).
    console.log(`      measured: ${COUNT} messages, failover after ${before}; processed twice during the failover: ${duringFailover}; second copies processed again: ${processedTwice} of ${COUNT}`);
    return { processedTwice, duringFailover };
  }

  it('Sentinel: the master killed (SIGKILL) mid-consumption → the replica promoted, consumption goes on: lost 0, duplicates measured', async () => {
    const sentinel = await startPrivateSentinel();
    try {
      await run(sentinel.url, () => sentinel.killMaster());
      // The consumer paused while no master answered, naming the store.
      assert.ok(
        statusTexts('consumer').some((text) => text.startsWith(`dedup store down: redis sentinel ${sentinel.name} (127.0.0.1:`)),
        statusTexts('consumer').join(' | '),
      );
    } finally {
      await helper.unload();
      await sentinel.remove();
    }
  });

  it('Sentinel: the replica 1.5 s behind when the master dies → the keys it missed are processed again when a copy comes (measured, > 0), lost 0', async () => {
    const sentinel = await startPrivateSentinel();
    try {
      const { processedTwice } = await run(sentinel.url, () => sentinel.killMasterWithLag(1500));
      // The window the docs state, made wide on purpose: the keys written while the replica was stopped are gone.
      assert.ok(processedTwice > 0, 'the keys the replica missed are lost, and their copies processed again');
    } finally {
      await helper.unload();
      await sentinel.remove();
    }
  });

  it('Cluster: CLUSTER FAILOVER of the master serving the scope mid-consumption: lost 0, no key lost (a manual failover waits for the replica)', async function () {
    if (!canCreateCluster()) skipBecause(this, NO_REDIS_CLI);
    const cluster = await startPrivateCluster();
    try {
      // The master of the slot the scope's keys hash to (the scope is the consumer's main queue).
      const master = await cluster.masterOf(`{${encodeURIComponent(names.mainQueue)}}`);
      const { processedTwice, duringFailover } = await run(cluster.url, () => cluster.failover(master));
      assert.equal(processedTwice, 0, 'a manual failover promotes a replica that has every write: no processed key lost');
      assert.equal(duringFailover, 0);
    } finally {
      await helper.unload();
      await cluster.remove();
    }
  });

  it('Cluster: the master serving the scope killed (SIGKILL) mid-consumption → its replica promoted: lost 0, duplicates measured', async function () {
    if (!canCreateCluster()) skipBecause(this, NO_REDIS_CLI);
    const cluster = await startPrivateCluster();
    try {
      const master = await cluster.masterOf(`{${encodeURIComponent(names.mainQueue)}}`);
      await run(cluster.url, () => cluster.killMaster(master));
      assert.ok(
        statusTexts('consumer').some((text) => text.startsWith('dedup store down: redis cluster 127.0.0.1:')),
        statusTexts('consumer').join(' | '),
      );
    } finally {
      await helper.unload();
      await cluster.remove();
    }
  });
});
