/** The retry topology as a RabbitMQ definitions document (what `rabbitmqctl import_definitions` reads), case by case. */
import assert from 'node:assert/strict';
import { definitionsFileName, topologyDefinitions } from '../../../src/lib/topology/definitions';
import { MOVER_TTL_SLACK_MS, planTopology, type RetryTopologyConfig } from '../../../src/lib/topology/plan';
import { seedTopology } from '../fixtures/topology-seed';

const seed: RetryTopologyConfig = { ...seedTopology, mode: 'check' };

const defs = (config: Partial<RetryTopologyConfig>, vhost?: string) => topologyDefinitions(planTopology({ ...seed, ...config }), vhost);
const exchange = (name: string, type: string, args: Record<string, unknown> = {}, vhost = '/') => ({ name, vhost, type, durable: true, auto_delete: false, internal: false, arguments: args });
const queue = (name: string, args: Record<string, unknown>, vhost = '/') => ({ name, vhost, durable: true, auto_delete: false, arguments: args });
const binding = (source: string, destination: string, routingKey: string, vhost = '/') => ({ source, vhost, destination, destination_type: 'queue', routing_key: routingKey, arguments: {} });

describe('topology as RabbitMQ definitions', () => {
  it('classic layout: both exchanges, the three durable queues with their arguments, both bindings', () => {
    assert.deepEqual(defs({}), {
      vhosts: [{ name: '/' }],
      exchanges: [exchange('main-exchange', 'direct'), exchange('retry-exchange', 'fanout')],
      queues: [
        queue('main-queue', { 'x-dead-letter-exchange': 'retry-exchange' }),
        queue('retry-queue', { 'x-message-ttl': 3000, 'x-dead-letter-exchange': 'main-exchange' }),
        queue('parking-queue', {}),
      ],
      bindings: [binding('main-exchange', 'main-queue', 'srvc.transact.cash'), binding('retry-exchange', 'retry-queue', '')],
    });
  });

  it('no retry exchange: per-queue routing through the default exchange, which is never listed or bound', () => {
    const d = defs({ retryExchange: '', mainExchange: '', routingKeys: [] });
    assert.deepEqual(d.exchanges, []);
    assert.deepEqual(d.bindings, []);
    assert.deepEqual(d.queues, [
      queue('main-queue', { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'retry-queue' }),
      queue('retry-queue', { 'x-message-ttl': 3000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' }),
      queue('parking-queue', {}),
    ]);
  });

  it('quorum main queue: x-queue-type kept, dead-letters to the parking queue, extra arguments merged', () => {
    const d = defs({ retryExchange: '', mainQueueArguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 20 }, parkingQueueArguments: { 'x-queue-type': 'quorum' } });
    assert.deepEqual(d.queues, [
      queue('main-queue', { 'x-queue-type': 'quorum', 'x-delivery-limit': 20, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'parking-queue' }),
      queue('retry-queue', { 'x-message-ttl': 3000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' }),
      queue('parking-queue', { 'x-queue-type': 'quorum' }),
    ]);
    assert.deepEqual(d.bindings, [binding('main-exchange', 'main-queue', 'srvc.transact.cash')]);
  });

  it('backoff tiers: one queue per delay, quorum tiers with the mover slack as in declare mode', () => {
    const d = defs({ retryExchange: '', retryDelaysMs: [1000, 10_000], retryQueueArguments: { 'x-queue-type': 'quorum' } });
    assert.deepEqual(
      d.queues.map((q) => [q.name, q.arguments['x-message-ttl'], q.arguments['x-queue-type']]),
      [
        ['main-queue', undefined, undefined],
        ['retry-queue.1s', 1000 + MOVER_TTL_SLACK_MS, 'quorum'],
        ['retry-queue.10s', 10_000 + MOVER_TTL_SLACK_MS, 'quorum'],
        ['parking-queue', undefined, undefined],
      ],
    );
    // Exactly the plan's arguments: the one source of truth.
    assert.deepEqual(d.queues.map((q) => q.arguments), planTopology({ ...seed, retryExchange: '', retryDelaysMs: [1000, 10_000], retryQueueArguments: { 'x-queue-type': 'quorum' } }).queues.map((q) => q.arguments));
  });

  it('topic exchange with several keys: one binding per key, on the retry exchange too when it is a topic', () => {
    const d = defs({ mainExchangeType: 'topic', routingKeys: ['order.created', 'order.*'], retryExchangeType: 'topic' });
    assert.deepEqual(d.exchanges, [exchange('main-exchange', 'topic'), exchange('retry-exchange', 'topic')]);
    assert.deepEqual(d.bindings, [
      binding('main-exchange', 'main-queue', 'order.created'),
      binding('main-exchange', 'main-queue', 'order.*'),
      binding('retry-exchange', 'retry-queue', 'order.created'),
      binding('retry-exchange', 'retry-queue', 'order.*'),
    ]);
  });

  it('alternate exchange: a fanout listed first, named by the main exchange, with its unrouted queue bound', () => {
    const d = defs({ alternateExchange: 'main-ae', singleActiveConsumer: true });
    assert.deepEqual(d.exchanges, [exchange('main-ae', 'fanout'), exchange('main-exchange', 'direct', { 'alternate-exchange': 'main-ae' }), exchange('retry-exchange', 'fanout')]);
    assert.deepEqual(d.queues.at(-1), queue('main-exchange.unrouted', {}));
    assert.equal(d.queues[0]?.arguments['x-single-active-consumer'], true);
    assert.deepEqual(d.bindings.at(-1), binding('main-ae', 'main-exchange.unrouted', ''));
  });

  it('puts every object in the given vhost and never lists users, permissions or passwords', () => {
    const d = defs({}, 'orders/eu');
    assert.deepEqual(d.vhosts, [{ name: 'orders/eu' }]);
    assert.ok([...d.exchanges, ...d.queues, ...d.bindings].every((o) => o.vhost === 'orders/eu'));
    assert.deepEqual(Object.keys(d).sort(), ['bindings', 'exchanges', 'queues', 'vhosts']);
    assert.equal(defs({}, '').vhosts[0]?.name, '/');
  });

  it('names the file after the main queue', () => {
    assert.equal(definitionsFileName('orders'), 'orders-definitions.json');
    assert.equal(definitionsFileName('a/b "c"'), 'a_b_c_-definitions.json');
    assert.equal(definitionsFileName(''), 'retry-topology-definitions.json');
  });
});
