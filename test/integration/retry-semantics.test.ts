/**
 * Retry semantics that must hold on RabbitMQ 3.x and 4.x alike (the suite runs against both):
 * backoff tiers by republish, quorum main queues and their delivery limit, ordered mode, max age,
 * and errors routed through a Catch node.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

describe('retry semantics (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('sem');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → function(code) → [ack, retry, park]; returns what the consumer sent. */
  async function load(code: string, config: Record<string, unknown>, consumer: Record<string, unknown> = {}): Promise<Msg[]> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', ...config }),
      consumerNode([['decide', 'seen']], consumer),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: code, outputs: 3, wires: [['ack'], ['retry'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [[]] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', max: '10', resetAttempts: true, wires: [['replayed']] },
      { id: 'replayed', type: 'helper', z: 'flow' },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    await broker.waitForConsumer(names.mainQueue);
    return seen;
  }

  const alwaysRetry = "msg.error = 'still failing'; return [null, msg, null];";

  it('backoff tiers: each retry waits in the queue of its tier (the last repeating), counted by the package header, then parks', async () => {
    const tier1 = `${names.retryQueue}.300ms`;
    const tier2 = `${names.retryQueue}.600ms`;
    broker.track('queue', tier1, tier2);
    const seen = await load(alwaysRetry, { retryDelay: '300ms, 600ms', maxAttempts: '4' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'tiered' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after 4 attempts');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2, 3, 4]);
    // Which tier each attempt waited in, from the broker's own x-death (expired) entry of that hop
    // (RabbitMQ 3 also keeps the earlier hops of a republished message, RabbitMQ 4 only the last).
    const waitedIn = (m: Msg) => m.retry.deaths.filter((d: Msg) => d.reason === 'expired').map((d: Msg) => d.queue);
    assert.ok(waitedIn(seen[1]!).includes(tier1) && !waitedIn(seen[1]!).includes(tier2));
    assert.ok(waitedIn(seen[2]!).includes(tier2));
    assert.ok(waitedIn(seen[3]!).includes(tier2));
    // Republished copies carry the package's attempt header: RabbitMQ 4 would not count a republished x-death.
    assert.deepEqual(seen.map((m) => m.amqp.headers['retry-attempt']), [undefined, 1, 2, 3]);
    assert.ok(seen.slice(1).every((m) => typeof m.amqp.headers['retry-first-seen'] === 'number'));
    const parked = await broker.take(names.parkingQueue);
    assert.equal(parked.properties.headers?.['retry-attempt'], 4);
    assert.equal(parked.properties.headers?.['park-reason'], 'max attempts (4) reached; last error: still failing');
    assert.equal(parked.properties.messageId, 'tiered');
    assert.equal(await broker.messageCount(tier1), 0);
    assert.equal(await broker.messageCount(tier2), 0);
    assert.equal(await broker.messageCount(names.mainQueue), 0);
  });

  it('quorum main queue: more attempts than the delivery limit still end in the parking queue', async () => {
    const seen = await load(alwaysRetry, { retryDelay: '200', maxAttempts: '4', mainQueueArgs: '{"x-queue-type":"quorum","x-delivery-limit":2}' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after 4 attempts');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2, 3, 4]);
    const parked = await broker.take(names.parkingQueue);
    assert.match(String(parked.properties.headers?.['park-reason']), /^max attempts \(4\) reached/);
  });

  it('quorum main queue: a message the broker dead-letters at the delivery limit is parked, not dropped as a cycle', async () => {
    await load(alwaysRetry, { retryDelay: '200', mainQueueArgs: '{"x-queue-type":"quorum","x-delivery-limit":2}' });
    // The package's consumer goes away; a consumer that crashes on the message (reject, requeue) takes its place.
    await helper.unload();
    await broker.publish(names.mainExchange, names.routingKey, { crash: true });
    const ch = await broker.ch();
    for (let i = 0; i < 5 && (await broker.messageCount(names.parkingQueue)) === 0; i += 1) {
      let delivery: Awaited<ReturnType<typeof ch.get>> = false;
      await waitFor(async () => {
        delivery = await ch.get(names.mainQueue);
        return delivery !== false || (await broker.messageCount(names.parkingQueue)) === 1;
      }, 'a delivery or the dead-letter');
      // A crash, as RabbitMQ 4.3 counts it: a reject with requeue (a nack with requeue no longer counts there).
      if (delivery) ch.reject(delivery, true);
    }
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message dead-lettered into the parking queue');
    const parked = await broker.take(names.parkingQueue);
    const deaths = (parked.properties.headers?.['x-death'] ?? []) as Msg[];
    assert.ok(deaths.some((d) => d.queue === names.mainQueue && d.reason === 'delivery_limit'), JSON.stringify(deaths));
  });

  it('ordered mode: a failing message blocks the queue and runs again after the pause until it succeeds; nothing overtakes it', async () => {
    const code = `
      if (msg.payload.n === 1 && msg.retry.attempt < 3) { msg.error = 'target not ready'; return [null, msg, null]; }
      return [msg, null, null];`;
    const statuses: string[] = [];
    const seen = await load(code, { mainQueueArgs: '{"x-queue-type":"quorum","x-delivery-limit":1}' }, { mode: 'ordered', orderedPause: '0.2', prefetch: '50' });
    helper.getNode('consumer').on('call:status', (c: { args: Array<{ text?: string }> }) => statuses.push(String(c.args[0]?.text)));
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    await broker.publish(names.mainExchange, names.routingKey, { n: 2 });
    await waitFor(async () => seen.length === 4 && (await broker.messageCount(names.mainQueue)) === 0, 'both messages processed');
    assert.deepEqual(seen.map((m) => [m.payload.n, m.retry.attempt]), [[1, 1], [1, 2], [1, 3], [2, 1]]);
    assert.deepEqual(seen.map((m) => [m.retry.maxAttempts, m.retry.remaining]), [[0, null], [0, null], [0, null], [0, null]]);
    assert.ok(statuses.some((t) => /^blocked since \d{4}-.*, attempt 2: target not ready$/.test(t)), statuses.join(' | '));
    // Never returned to the broker, so the quorum delivery limit (1) was never hit: nothing parked.
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
    assert.equal(await broker.messageCount(names.retryQueue), 0);
  });

  it('max age: a message older than the limit is parked instead of retried, with the reason', async () => {
    await load(alwaysRetry, { maxAge: '1' });
    await broker.publish(names.mainExchange, names.routingKey, { old: true }, { timestamp: Math.floor(Date.now() / 1000) - 60 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the old message parked');
    const parked = await broker.take(names.parkingQueue);
    assert.equal(parked.properties.headers?.['park-reason'], 'older than the max age of 1 s; last error: still failing');
    assert.equal(parked.properties.headers?.['retry-attempt'], 1);
  });

  it('an error thrown in the flow reaches a retry end node through a Catch node; exhausted, it parks with the error text', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', retryDelay: '200', maxAttempts: '2' }),
      consumerNode([['work']]),
      { id: 'work', type: 'function', z: 'flow', func: "throw new Error('database unavailable');", outputs: 1, wires: [['ack']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'catch', type: 'catch', z: 'flow', scope: ['work'], uncaught: false, wires: [['retry']] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked');
    const parked = await broker.take(names.parkingQueue);
    assert.match(String(parked.properties.headers?.['park-reason']), /^max attempts \(2\) reached; last error: .*database unavailable/);
  });

  it('replay: parked messages go back to the main queue with their attempts reset, and are handled again', async () => {
    // Fails while the flow context says the cause is not fixed; succeeds after.
    const code = `
      if (!flow.get('fixed')) { msg.error = 'downstream down'; return [null, msg, null]; }
      return [msg, null, null];`;
    const seen = await load(code, { retryDelay: '100', maxAttempts: '2' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'one' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 2 }, { messageId: 'two' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 2, 'both messages parked');
    (helper.getNode('decide') as any).context().flow.set('fixed', true);
    const results: Msg[] = [];
    helper.getNode('replayed').on('input', (m: Msg) => results.push(m));
    helper.getNode('replay').receive({});
    await waitFor(() => results.length === 1, 'the replay result');
    assert.deepEqual(results[0]!.payload, { action: 'replay', count: 2, remaining: 0, replayed: 2, replayId: results[0]!.payload.replayId });
    await waitFor(async () => seen.length === 6 && (await broker.messageCount(names.mainQueue)) === 0, 'both handled again');
    const again = seen.slice(4);
    assert.deepEqual(again.map((m) => m.retry.attempt), [1, 1]);
    assert.deepEqual(again.map((m) => m.amqp.headers['park-replayed']), [1, 1]);
    assert.deepEqual(again.map((m) => m.amqp.routingKey), [names.routingKey, names.routingKey]);
    assert.equal(again.some((m) => 'park-reason' in m.amqp.headers), false);
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });
});
