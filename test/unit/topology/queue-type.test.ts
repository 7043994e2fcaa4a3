/** The queue type field of a retry configuration (issue 53): into the main and parking queues' arguments, a conflict with the extra arguments, and which queues are classic on a cluster. Pure. */
import assert from 'node:assert/strict';
import { planTopology, retryRoute } from '../../../src/lib/topology';
import { applyQueueType, classicOnCluster, classicQueuesOf, findClassicOnCluster, queueTypeOf, withQueueType } from '../../../src/lib/topology/queue-type';
import { topologyFromDefinition, topologyProblemsOf } from '../../../src/nodes/shared/topology-definition';

const def = { mode: 'declare', mainQueue: 'orders', retryDelay: '5000', maxAttempts: 3 };
const argsOf = (d: Record<string, unknown>, role: 'main' | 'parking' | 'retry'): Record<string, unknown> | undefined => planTopology(topologyFromDefinition(d)).queues.find((q) => q.role === role)?.arguments;

describe('queue type: the field', () => {
  it('reads classic and quorum; absent or empty is none (the extra arguments say)', () => {
    assert.equal(queueTypeOf('classic'), 'classic');
    assert.equal(queueTypeOf('quorum'), 'quorum');
    assert.equal(queueTypeOf(''), undefined);
    assert.equal(queueTypeOf(undefined), undefined);
  });

  it('sets x-queue-type on the main and parking queues, not on the retry queue', () => {
    assert.equal(argsOf({ ...def, queueType: 'quorum' }, 'main')?.['x-queue-type'], 'quorum');
    assert.equal(argsOf({ ...def, queueType: 'quorum' }, 'parking')?.['x-queue-type'], 'quorum');
    assert.equal(argsOf({ ...def, queueType: 'quorum' }, 'retry')?.['x-queue-type'], undefined);
    assert.equal(argsOf({ ...def, queueType: 'classic' }, 'main')?.['x-queue-type'], 'classic');
    assert.equal(argsOf({ ...def, queueType: 'classic' }, 'parking')?.['x-queue-type'], 'classic');
  });

  it('makes a quorum main queue retry as one does (republish, parked at the delivery limit)', () => {
    assert.equal(retryRoute(topologyFromDefinition({ ...def, queueType: 'quorum' })), 'republish');
    assert.equal(retryRoute(topologyFromDefinition({ ...def, queueType: 'classic' })), 'dead-letter');
  });

  it('leaves a definition without it as before: the extra arguments decide', () => {
    assert.equal(argsOf(def, 'main')?.['x-queue-type'], undefined);
    assert.equal(argsOf({ ...def, mainQueueArgs: '{"x-queue-type":"quorum"}' }, 'main')?.['x-queue-type'], 'quorum');
    assert.equal(argsOf({ ...def, queueType: '', parkingQueueArgs: '{"x-queue-type":"quorum"}' }, 'parking')?.['x-queue-type'], 'quorum');
  });

  it('accepts extra arguments that say the same type, and other extra arguments beside it', () => {
    assert.deepEqual(topologyProblemsOf({ ...def, queueType: 'quorum', mainQueueArgs: '{"x-queue-type":"quorum","x-delivery-limit":5}' }), []);
    assert.equal(argsOf({ ...def, queueType: 'quorum', mainQueueArgs: '{"x-delivery-limit":5}' }, 'main')?.['x-delivery-limit'], 5);
  });

  it('refuses extra arguments of another type, naming both, for the main and the parking queue', () => {
    const main = topologyProblemsOf({ ...def, queueType: 'classic', mainQueueArgs: '{"x-queue-type":"quorum"}' });
    assert.deepEqual(main, ['main queue argument x-queue-type is "quorum" but the queue type field says classic: choose one (remove x-queue-type from the extra arguments, or set the queue type to match)']);
    const parking = topologyProblemsOf({ ...def, queueType: 'quorum', parkingQueueArgs: '{"x-queue-type":"classic"}' });
    assert.equal(parking.length, 1);
    assert.match(parking[0]!, /^parking queue argument x-queue-type is "classic" but the queue type field says quorum/);
    assert.throws(() => topologyFromDefinition({ ...def, queueType: 'quorum', mainQueueArgs: '{"x-queue-type":"stream"}' }), /queue type field says quorum/);
  });

  it('refuses a value that is not a choice', () => {
    assert.deepEqual(topologyProblemsOf({ ...def, queueType: 'stream' }), ['queue type "stream" is not one of classic, quorum']);
  });

  it('gives broker-native delayed retry the quorum main queue it needs, and says a classic one is refused', () => {
    assert.deepEqual(topologyProblemsOf({ ...def, queueType: 'quorum', delayedRetry: 'broker' }), []);
    assert.match(topologyProblemsOf({ ...def, queueType: 'classic', delayedRetry: 'broker' }).join('; '), /needs a quorum main queue \(queue type quorum\), the main queue is "classic"/);
  });

  it('withQueueType keeps the arguments it is given', () => {
    const args = { 'x-max-length': 10 };
    assert.deepEqual(withQueueType(args, 'quorum', 'main').args, { 'x-max-length': 10, 'x-queue-type': 'quorum' });
    assert.deepEqual(args, { 'x-max-length': 10 });
    assert.deepEqual(withQueueType(args, undefined, 'main'), { args });
  });

  it('applyQueueType sets both queues of a configuration', () => {
    const topology = topologyFromDefinition(def);
    assert.deepEqual(applyQueueType(topology, 'quorum'), []);
    assert.equal(topology.mainQueueArguments['x-queue-type'], 'quorum');
    assert.equal(topology.parkingQueueArguments['x-queue-type'], 'quorum');
  });
});

describe('queue type: classic queues on a cluster', () => {
  const threeNodes = ['rabbit@a', 'rabbit@b', 'rabbit@c'];

  it('names the classic main and parking queues (every partition), not the retry queues', () => {
    assert.deepEqual(classicQueuesOf(topologyFromDefinition(def)), ['orders', 'orders.parking']);
    assert.deepEqual(classicQueuesOf(topologyFromDefinition({ ...def, queueType: 'classic' })), ['orders', 'orders.parking']);
    assert.deepEqual(classicQueuesOf(topologyFromDefinition({ ...def, queueType: 'quorum' })), []);
    assert.deepEqual(classicQueuesOf(topologyFromDefinition({ ...def, parkingQueueArgs: '{"x-queue-type":"quorum"}' })), ['orders']);
    assert.deepEqual(classicQueuesOf(topologyFromDefinition({ ...def, partitions: 3 })), ['orders.0', 'orders.parking', 'orders.1', 'orders.2']);
  });

  it('leaves out an existing main queue (checked, never declared)', () => {
    const existing = { mode: 'check', existingQueue: true, mainExchange: 'amq.topic', mainExchangeType: 'topic', mainQueue: 'orders', routingKeys: 'order.*', retryDelay: '5000', maxAttempts: 3 };
    assert.deepEqual(classicQueuesOf(topologyFromDefinition(existing)), ['orders.parking']);
  });

  it('says them only on a broker of several nodes', () => {
    const topology = topologyFromDefinition(def);
    assert.deepEqual(classicOnCluster(topology, threeNodes), { queues: ['orders', 'orders.parking'], nodes: threeNodes });
    assert.equal(classicOnCluster(topology, ['rabbit@one']), undefined);
    assert.equal(classicOnCluster(topology, []), undefined);
    assert.equal(classicOnCluster(topologyFromDefinition({ ...def, queueType: 'quorum' }), threeNodes), undefined);
  });

  it('asks the broker its nodes only when a queue is classic (a fake management answer)', async () => {
    let asked = 0;
    const reader = { clusterNodes: () => ((asked += 1), Promise.resolve(threeNodes)) };
    assert.equal(await findClassicOnCluster(topologyFromDefinition({ ...def, queueType: 'quorum' }), reader), undefined);
    assert.equal(asked, 0);
    assert.deepEqual(await findClassicOnCluster(topologyFromDefinition(def), reader), { queues: ['orders', 'orders.parking'], nodes: threeNodes });
    assert.equal(asked, 1);
  });
});
