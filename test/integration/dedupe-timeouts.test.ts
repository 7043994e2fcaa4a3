/**
 * The idempotent consumer when a flow never settles a message (issue 28), on the real broker and the
 * real Redis store, in the Node-RED runtime: the settle timeout ends the delivery and releases its
 * key, so a copy held on it is processed then — not when the claim's lease (300 s here) ends. The
 * same when the delivery's channel was lost first: its key is released at its settle deadline, and
 * the redelivered copy is processed. And a copy held by another process moves once that process
 * records the key, though a copy of another key waits here for a whole lease (one recheck timer
 * for both, armed for the earliest). Asserted by the order of events and what was processed; the
 * lease is far beyond any wait of the test.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Broker, closeConnectionsNamed, uniqueName, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';
import { REDIS_URL } from '../helpers/private-stores';
import { RedisDedupeStore } from '../../src/lib/dedupe';

type Msg = Record<string, any>;

describe('idempotent consumer: a message nobody settles does not hold its copies for the lease (real broker, Redis)', function () {
  let broker: Broker;
  let names: Names;
  let prefix: string;
  /** This test's broker connection, `node-red <name>` on the broker (one the test may have closed). */
  let brokerName: string;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('dedupe-timeouts');
    prefix = `test-timeouts-${randomBytes(4).toString('hex')}:`;
    brokerName = uniqueName('broker');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  /**
   * Consumers (prefetch 1) → a function that drops (never settles) the first delivery of a payload
   * with `drop` set, and acks the rest. Every consumer's events go to one list.
   */
  async function load(consumers: string[], settleTimeout: string, prefetch = '1'): Promise<{ processed: Msg[]; events: Msg[] }> {
    const decide = `
      if (msg.payload.drop && !msg.amqp.redelivered && msg.retry.attempt === 1) return null;
      return msg;`;
    await loadFlow([
      tab(),
      brokerNode({ name: brokerName }),
      configNode(names),
      { id: 'store', type: 'retry-dedupe', kind: 'redis', url: REDIS_URL, prefix, leaseSeconds: '300' },
      ...consumers.map((id) =>
        consumerNode([['decide', 'seen'], ['events']], { id, name: id, dedupe: 'store', events: true, statsEvery: '0', outputs: 2, prefetch, settleTimeout }),
      ),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: decide, outputs: 1, wires: [['ack']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const processed: Msg[] = [];
    const events: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => processed.push(msg));
    helper.getNode('events').on('input', (msg: Msg) => events.push(msg));
    await waitFor(async () => (await broker.consumerCount(names.mainQueue)) === consumers.length, 'the consumers');
    return { processed, events };
  }

  /** The settle events of one messageId, in order: `retried 1`, `acked 1`, `duplicate 2`. */
  const outcomes = (events: Msg[], id: string): string[] => events.filter((e) => e.payload.messageId === id).map((e) => `${e.payload.event} ${e.payload.attempt}`);

  it('two consumers: a copy held on a key whose message timed out in the other is processed once the timeout retries it', async () => {
    const { processed, events } = await load(['consumer-a', 'consumer-b'], '2');
    await broker.publish(names.mainExchange, names.routingKey, { drop: true }, { messageId: 'pay-1' });
    await waitFor(() => processed.length === 1, 'the first copy in a flow that drops it');
    // Its consumer's one prefetch slot is taken: the copy goes to the other consumer, which finds the key held.
    await broker.publish(names.mainExchange, names.routingKey, { drop: false }, { messageId: 'pay-1' });
    await waitFor(() => processed.length === 2, 'the copy processed after the settle timeout, not after the 300 s lease');
    assert.notEqual(processed[1]!.amqp.consumerTag, processed[0]!.amqp.consumerTag, 'held by the other consumer through Redis');
    await waitFor(() => outcomes(events, 'pay-1').length === 3, 'the retried first copy back');
    assert.deepEqual(outcomes(events, 'pay-1'), ['retried 1', 'acked 1', 'duplicate 2'], 'timed out and retried, then the copy processed, then the retry is a duplicate');
    assert.equal(processed.length, 2);
  });

  it('a lost channel: the redelivered copy is processed once the settle deadline of the delivery the flow kept releases its key', async () => {
    // A settle timeout long enough for the broker to list the connection and close it first (its list lags some seconds).
    const { processed, events } = await load(['consumer'], '15');
    await broker.publish(names.mainExchange, names.routingKey, { drop: true }, { messageId: 'pay-2' });
    await waitFor(() => processed.length === 1, 'the first delivery in a flow that drops it');
    await closeConnectionsNamed(`node-red ${brokerName}`);
    await waitFor(() => processed.length === 2, 'the redelivery processed after the settle deadline, not after the 300 s lease');
    assert.equal(processed[1]!.amqp.redelivered, true, 'the same message, redelivered (the channel was lost before its settle timeout)');
    await waitFor(() => outcomes(events, 'pay-2').length === 1, 'its settle');
    assert.deepEqual(outcomes(events, 'pay-2'), ['acked 1'], 'processed once more and acked: no retry, no duplicate');
  });

  it('a copy held by another process moves once that process settles it, though a copy of another key here waits for a whole lease', async () => {
    // Settle timeout off: the dropped message's claim lasts the whole 300 s lease.
    const { processed, events } = await load(['consumer'], '0', '10');
    await broker.publish(names.mainExchange, names.routingKey, { drop: true }, { messageId: 'stuck' });
    await waitFor(() => processed.length === 1, 'the first copy of stuck in a flow that drops it');
    await broker.publish(names.mainExchange, names.routingKey, { drop: false }, { messageId: 'stuck' });
    // Another process (the test, with its own claim on the same Redis) processes 'fast'.
    const other = new RedisDedupeStore({ url: REDIS_URL, prefix });
    try {
      await other.prepare();
      const key = { scope: names.mainQueue, key: 'fast' };
      assert.deepEqual(await other.claim([key], 'another-process', 300_000), [{ state: 'claimed' }]);
      await broker.publish(names.mainExchange, names.routingKey, { drop: false }, { messageId: 'fast' });
      await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'both copies delivered, held');
      assert.equal(processed.length, 1, 'both wait: stuck for its lease here, fast for the other process');
      await other.complete([key], 60_000);
      await waitFor(() => outcomes(events, 'fast').length === 1, 'the held copy of fast looked at again once the other process recorded it, not after the 300 s lease of stuck');
      assert.deepEqual(outcomes(events, 'fast'), ['duplicate 1']);
      assert.deepEqual(outcomes(events, 'stuck'), [], 'the copy of stuck still waits for its lease');
      assert.equal(processed.length, 1);
    } finally {
      await other.close();
    }
  });
});
