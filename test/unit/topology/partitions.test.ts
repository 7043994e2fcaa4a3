import assert from 'node:assert/strict';
import { busiestShare, fnv1a32, isPartitioned, partitionKeyText, partitionOf, partitionQueueNames, partitionTarget, partitionTopology } from '../../../src/lib/topology/partitions';
import { planTopology, validateTopologyConfig, type RetryTopologyConfig } from '../../../src/lib/topology/plan';

const base: RetryTopologyConfig = {
  mode: 'declare',
  mainExchange: '',
  mainExchangeType: 'direct',
  mainQueue: 'orders',
  routingKeys: [],
  retryExchange: '',
  retryExchangeType: 'fanout',
  retryQueue: 'orders.retry',
  retryDelaysMs: [5000],
  parkingQueue: 'orders.parking',
  maxAttempts: 3,
  maxAgeMs: 0,
  mainQueueArguments: {},
  retryQueueArguments: {},
  parkingQueueArguments: {},
  partitions: 4,
  partitionRouting: 'auto',
};

describe('partitions: the key hash', () => {
  it('is FNV-1a 32 over the UTF-8 bytes (the published test vectors)', () => {
    assert.equal(fnv1a32(''), 0x811c9dc5);
    assert.equal(fnv1a32('a'), 0xe40c292c);
    assert.equal(fnv1a32('foobar'), 0xbf9cf968);
  });

  it('hashes non-ASCII keys by their UTF-8 bytes', () => {
    assert.equal(fnv1a32('заказ-7'), 0xc5a8a3e3);
    assert.equal(partitionOf('заказ-7', 8), 3);
  });

  it('gives the partition as the hash mod N: the same for the same key, every time', () => {
    assert.equal(partitionOf('order-42', 8), 0x572446f4 % 8);
    assert.equal(partitionOf('order-42', 8), 4);
    assert.equal(partitionOf('foobar', 8), 0);
    for (let i = 0; i < 100; i++) assert.equal(partitionOf(`k${i}`, 8), partitionOf(`k${i}`, 8));
  });

  it('spreads keys over every partition', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 8000; i++) counts[partitionOf(`key-${i}`, 8)]! += 1;
    for (const count of counts) assert.ok(count > 800 && count < 1200, `uneven: ${counts.join(',')}`);
  });

  it('spreads 1 000 keys and 60 keys evenly over 8 partitions: busiest ≤ 1.25× and ≤ 1.6× the mean (issue 53)', () => {
    const spread = (name: (i: number) => string, keys: number): number => {
      const counts = new Array<number>(8).fill(0);
      for (let i = 0; i < keys; i++) counts[partitionOf(name(i), 8)]! += 1;
      return busiestShare(counts);
    };
    for (const [label, name] of [['key-<n>', (i: number) => `key-${i}`], ['order-<n>', (i: number) => `order-${i}`], ['customer-<n>', (i: number) => `customer-${i}`], ['<n>', (i: number) => String(i)]] as const) {
      assert.ok(spread(name, 1000) <= 1.25, `${label}, 1 000 keys: ${spread(name, 1000)}`);
      assert.ok(spread(name, 60) <= 1.6, `${label}, 60 keys: ${spread(name, 60)}`);
    }
  });

  it('measures a spread as the busiest count over the mean', () => {
    assert.equal(busiestShare([2, 2, 2, 2]), 1);
    assert.equal(busiestShare([13, 5, 7, 5, 2, 9, 10, 9]), 13 / 7.5);
    assert.equal(busiestShare([0, 0]), 1);
  });

  it('reads a key from strings, numbers and booleans only', () => {
    assert.equal(partitionKeyText('a'), 'a');
    assert.equal(partitionKeyText(42), '42');
    assert.equal(partitionKeyText(true), 'true');
    assert.equal(partitionKeyText(''), undefined);
    assert.equal(partitionKeyText(undefined), undefined);
    assert.equal(partitionKeyText({ id: 1 }), undefined);
    assert.equal(partitionKeyText(Number.NaN), undefined);
  });
});

describe('partitions: the topology', () => {
  it('is partitioned from 2 partitions', () => {
    assert.equal(isPartitioned({ partitions: undefined }), false);
    assert.equal(isPartitioned({ partitions: 1 }), false);
    assert.equal(isPartitioned({ partitions: 2 }), true);
    assert.deepEqual(partitionQueueNames(base), ['orders.0', 'orders.1', 'orders.2', 'orders.3']);
  });

  it('makes each partition an ordered queue with its own retry queue, bound by its number (computed routing)', () => {
    const part = partitionTopology(base, 2, 'computed');
    assert.equal(part.mainQueue, 'orders.2');
    assert.equal(part.retryQueue, 'orders.retry.2');
    assert.equal(part.parkingQueue, 'orders.parking');
    assert.equal(part.mainExchange, 'orders.partitions');
    assert.equal(part.mainExchangeType, 'direct');
    assert.deepEqual(part.routingKeys, ['2']);
    assert.equal(part.singleActiveConsumer, true);
    assert.equal(part.partitions, undefined);
  });

  it('binds every partition with weight 1 on the consistent-hash exchange', () => {
    const part = partitionTopology(base, 1, 'consistent-hash');
    assert.equal(part.mainExchangeType, 'x-consistent-hash');
    assert.deepEqual(part.routingKeys, ['1']);
  });

  it('plans N partition queues, their retry queues, one exchange and one parking queue', () => {
    const plan = planTopology(base);
    assert.deepEqual(plan.exchanges, [{ name: 'orders.partitions', type: 'direct' }]);
    assert.deepEqual(
      plan.queues.map((q) => [q.role, q.name]),
      [
        ['main', 'orders.0'],
        ['retry', 'orders.retry.0'],
        ['parking', 'orders.parking'],
        ['main', 'orders.1'],
        ['retry', 'orders.retry.1'],
        ['main', 'orders.2'],
        ['retry', 'orders.retry.2'],
        ['main', 'orders.3'],
        ['retry', 'orders.retry.3'],
      ],
    );
    assert.deepEqual(plan.queues[0]?.arguments, { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'orders.retry.0', 'x-single-active-consumer': true });
    assert.deepEqual(plan.queues[1]?.arguments, { 'x-message-ttl': 5000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'orders.0' });
    assert.deepEqual(
      plan.bindings,
      [0, 1, 2, 3].map((i) => ({ queue: `orders.${i}`, exchange: 'orders.partitions', routingKey: String(i) })),
    );
  });

  it('plans retry tiers per partition', () => {
    const plan = planTopology({ ...base, partitions: 2, retryDelaysMs: [1000, 10_000] });
    assert.deepEqual(
      plan.queues.map((q) => q.name),
      ['orders.0', 'orders.retry.0.1s', 'orders.retry.0.10s', 'orders.parking', 'orders.1', 'orders.retry.1.1s', 'orders.retry.1.10s'],
    );
  });

  it('plans a consistent-hash exchange when chosen', () => {
    const plan = planTopology({ ...base, partitionRouting: 'consistent-hash' });
    assert.deepEqual(plan.exchanges, [{ name: 'orders.partitions', type: 'x-consistent-hash' }]);
    assert.ok(plan.bindings.every((b) => b.routingKey === '1'));
  });

  it('routes a key to its partition: the number (computed) or the key itself (consistent hash)', () => {
    assert.deepEqual(partitionTarget({ mainQueue: 'orders', partitions: 8 }, 'computed', 'order-42'), { exchange: 'orders.partitions', routingKey: '4', partition: 4 });
    assert.deepEqual(partitionTarget({ mainQueue: 'orders', partitions: 8 }, 'consistent-hash', 'order-42'), { exchange: 'orders.partitions', routingKey: 'order-42' });
  });

  it('refuses what a partitioned configuration cannot have', () => {
    assert.deepEqual(validateTopologyConfig(base), []);
    assert.match(validateTopologyConfig({ ...base, mainExchange: 'x' }).join('; '), /publishes through its own exchange 'orders.partitions'/);
    assert.match(validateTopologyConfig({ ...base, retryExchange: 'r' }).join('; '), /its own retry queue/);
    assert.match(validateTopologyConfig({ ...base, partitions: 300 }).join('; '), /2 to 256/);
    assert.match(validateTopologyConfig({ ...base, existingMainQueue: true }).join('; '), /cannot use an existing main queue/);
    assert.match(validateTopologyConfig({ ...base, partitions: 2.5 }).join('; '), /whole number/);
    assert.deepEqual(validateTopologyConfig({ ...base, partitions: 0 }), []);
  });
});
