/** Check mode on an existing main queue (retry-config's existingQueue, issue 41): what it plans and accepts. Pure. */
import assert from 'node:assert/strict';
import { planTopology, retryRoute, validateTopologyConfig } from '../../../../src/lib/topology';
import { topologyFromDefinition } from '../../../../src/nodes/shared/topology-definition';

const def = { mode: 'check', existingQueue: true, mainExchange: 'amq.topic', mainExchangeType: 'topic', mainQueue: 'orders', routingKeys: 'order.*', retryDelay: '5000', maxAttempts: 3 };

describe('retry-config: check mode on an existing main queue', function () {
  it('is read from the definition only in check mode', function () {
    assert.equal(topologyFromDefinition(def).existingMainQueue, true);
    assert.equal(topologyFromDefinition({ ...def, mode: 'declare', mainExchange: 'orders' }).existingMainQueue, undefined);
    assert.equal(topologyFromDefinition({ ...def, existingQueue: false, mainExchange: 'orders' }).existingMainQueue, undefined);
  });

  it('retries by republishing (the main queue has no dead-letter exchange of the package) and sets no argument on the main queue', function () {
    const topology = topologyFromDefinition(def);
    assert.equal(retryRoute(topology), 'republish');
    const plan = planTopology(topology);
    assert.equal(plan.existingMainQueue, true);
    assert.deepEqual(plan.queues.find((q) => q.role === 'main')?.arguments, {});
    assert.deepEqual(plan.queues.find((q) => q.role === 'retry')?.arguments, { 'x-message-ttl': 5000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'orders' });
    assert.deepEqual(plan.bindings, [{ queue: 'orders', exchange: 'amq.topic', routingKey: 'order.*' }]);
  });

  it('accepts the broker\'s own amq.* exchanges for it (checked, never declared), not for a queue it declares', function () {
    assert.deepEqual(validateTopologyConfig(topologyFromDefinition(def)), []);
    assert.throws(() => topologyFromDefinition({ ...def, existingQueue: false }), /amq\./);
  });
});
