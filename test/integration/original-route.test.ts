/**
 * A retried message comes back to the main queue through the retry route (the default exchange and
 * the main queue's name, or a tier queue), not through the exchange and routing key its producer
 * used. A flow that switches on `msg.topic` (several routing keys bound to one queue) and the parked
 * copy's `park-original-*` headers (replay, selection by routing key) must still see the producer's.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

describe('the original exchange and routing key survive retries (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('route');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** Retries every attempt until the last parks it; returns the msgs the consumer sent. */
  async function retryUntilParked(config: Record<string, unknown>): Promise<Msg[]> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', routingKeys: 'orders.created, orders.cancelled', maxAttempts: '3', ...config }),
      consumerNode([['retry', 'seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', reason: 'still failing', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, 'orders.cancelled', { n: 1 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after 3 attempts');
    return seen;
  }

  async function assertOriginalRoute(seen: Msg[]): Promise<void> {
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2, 3]);
    assert.deepEqual(seen.map((m) => m.topic), ['orders.cancelled', 'orders.cancelled', 'orders.cancelled']);
    assert.deepEqual(seen.map((m) => [m.amqp.exchange, m.amqp.routingKey]), Array(3).fill([names.mainExchange, 'orders.cancelled']));
    const headers = (await broker.take(names.parkingQueue)).properties.headers ?? {};
    assert.equal(headers['park-original-exchange'], names.mainExchange);
    assert.equal(headers['park-original-routing-key'], 'orders.cancelled');
  }

  it('per-queue retry route (dead-lettered through the default exchange)', async () => {
    await assertOriginalRoute(await retryUntilParked({ retryDelay: '100' }));
  });

  it('backoff tiers (republished to a tier queue)', async () => {
    broker.track('queue', `${names.retryQueue}.100ms`, `${names.retryQueue}.200ms`);
    await assertOriginalRoute(await retryUntilParked({ retryDelay: '100ms, 200ms' }));
  });

  it('quorum main queue (republished to the retry queue)', async () => {
    await assertOriginalRoute(await retryUntilParked({ retryDelay: '100', mainQueueArgs: '{"x-queue-type":"quorum"}' }));
  });
});
