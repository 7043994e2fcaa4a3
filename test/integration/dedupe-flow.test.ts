/**
 * The idempotent consumer in the Node-RED runtime, on the real broker and the real stores: a retried
 * message is processed again (the SET NX-before-handling bug), a copy of an acked one is acked without
 * entering the flow (status, events output, metrics), a copy arriving while the first is in the flow
 * waits for it, a message without a key follows the choice, and a store that stops pauses consuming
 * with nothing lost.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';
import { canStartPrivateRedis, DATABASE_URL, NO_PRIVATE_REDIS, REDIS_URL, startPrivateRedis, type PrivateServer } from '../helpers/private-stores';
import { skipBecause } from '../helpers/skips';
import { removeRedisKeys } from '../helpers/dedupe-subjects';
import { PostgresDatabase } from '../../src/lib/postgres';

type Msg = Record<string, any>;

function statusText(id: string): string {
  return lastStatus(id)?.text ?? '';
}

const STORES: Array<{ kind: string; nodes: (tag: string) => Array<Record<string, unknown>> }> = [
  { kind: 'memory', nodes: () => [{ id: 'store', type: 'retry-dedupe', kind: 'memory' }] },
  { kind: 'redis', nodes: (tag) => [{ id: 'store', type: 'retry-dedupe', kind: 'redis', url: REDIS_URL, prefix: `test-flow-${tag}:` }] },
  {
    kind: 'postgres',
    nodes: (tag) => [
      { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
      { id: 'store', type: 'retry-dedupe', kind: 'postgres', postgres: 'db', table: `test_dedupe_${tag}`, mode: 'declare' },
    ],
  },
];

describe('idempotent consumer in the Node-RED runtime (real broker and stores)', function () {
  let broker: Broker;
  let names: Names;
  let tag: string;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('dedupe');
    tag = randomBytes(4).toString('hex');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
    const db = new PostgresDatabase({ connectionString: DATABASE_URL });
    await db.query(`DROP TABLE IF EXISTS test_dedupe_${tag}`).catch(() => undefined);
    await db.close();
    await removeRedisKeys(REDIS_URL, `test-flow-${tag}:`);
  });

  /** consumer (dedupe) → function: first attempt of a payload with `fail` retried, the rest acked (or held when `hold`). */
  async function loadDedupeFlow(storeNodes: Array<Record<string, unknown>>, consumer: Record<string, unknown> = {}): Promise<{ processed: Msg[]; events: Msg[]; parked: Msg[] }> {
    const decide = `
      if (msg.payload.hold) { flow.set('held', (flow.get('held') || []).concat([msg.amqp.deliveryId])); global.set('heldMsgs_' + msg.amqp.deliveryId, msg); return [null, null]; }
      if (msg.payload.fail && msg.retry.attempt === 1) { msg.error = 'temporary'; return [null, msg]; }
      return [msg, null];`;
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      ...storeNodes,
      consumerNode([['decide', 'seen'], ['events']], { dedupe: 'store', events: true, statsEvery: '0', outputs: 2, ...consumer }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: decide, outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', reason: '', wires: [] },
    ]);
    const processed: Msg[] = [];
    const events: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => processed.push(msg));
    helper.getNode('events').on('input', (msg: Msg) => events.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    return { processed, events, parked: [] };
  }

  for (const store of STORES) {
    it(`${store.kind}: a retried message is processed again; a copy of an acked one is acked without entering the flow`, async () => {
      const { processed, events } = await loadDedupeFlow(store.nodes(tag));
      await broker.publish(names.mainExchange, names.routingKey, { fail: true }, { messageId: 'pay-1' });
      await waitFor(() => events.some((e) => e.payload.event === 'acked'), 'pay-1 acked after its retry');
      assert.deepEqual(
        processed.map((m) => m.retry.attempt),
        [1, 2],
        'the retry was processed, not taken for a duplicate (SET NX before handling would ack it unprocessed)',
      );

      // The same payment again (a redelivery after a lost ack, a producer's retry): acked, not processed.
      await broker.publish(names.mainExchange, names.routingKey, { fail: false }, { messageId: 'pay-1' });
      await waitFor(() => events.some((e) => e.payload.event === 'duplicate'), 'the duplicate event');
      const duplicate = events.find((e) => e.payload.event === 'duplicate')!;
      assert.equal(duplicate.payload.messageId, 'pay-1');
      assert.equal(processed.length, 2, 'the duplicate did not enter the flow');
      await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the duplicate acked');
      await waitFor(() => statusText('consumer').includes('≡1'), 'the duplicate counted on the status');
      const metrics = await helper.request().get('/rabbitmq-retry/metrics');
      assert.match(metrics.text, new RegExp(`messaging_client_consumed_messages_total\\{[^}]*queue="${names.mainQueue.replace(/\./g, '\\.')}"[^}]*outcome="duplicate"[^}]*\\} 1`));
    });
  }

  it('a copy that arrives while the first is in the flow waits, and is a duplicate once the first is acked', async () => {
    const { processed, events } = await loadDedupeFlow(STORES[0]!.nodes(tag), { prefetch: '10' });
    await broker.publish(names.mainExchange, names.routingKey, { hold: true }, { messageId: 'pay-2' });
    await waitFor(() => processed.length === 1, 'the first copy in the flow');
    await broker.publish(names.mainExchange, names.routingKey, { hold: false }, { messageId: 'pay-2' });
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the copy delivered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(processed.length, 1, 'the copy waits while the first is in the flow');
    helper.getNode('ack').receive(processed[0]!);
    await waitFor(() => events.some((e) => e.payload.event === 'duplicate'), 'the waiting copy acked as a duplicate');
    assert.equal(processed.length, 1);
    await waitFor(() => statusText('consumer').includes('· 0 in flight'), 'nothing in flight');
  });

  it('a message without a key is parked with reason "no deduplication key" when the consumer says so', async () => {
    const { processed } = await loadDedupeFlow(STORES[0]!.nodes(tag), { dedupeNoKey: 'park' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the keyless message parked');
    const parked = await (await broker.ch()).get(names.parkingQueue, { noAck: true });
    assert.ok(parked);
    assert.equal(parked.properties.headers?.['park-reason'], 'no deduplication key');
    assert.equal(processed.length, 0);
  });

  it('the key from a msg property (payload.paymentId)', async () => {
    const { processed, events } = await loadDedupeFlow(STORES[0]!.nodes(tag), { dedupeKeyType: 'msg', dedupeKey: 'payload.paymentId' });
    await broker.publish(names.mainExchange, names.routingKey, { paymentId: 'P-9' }, { messageId: 'a' });
    await broker.publish(names.mainExchange, names.routingKey, { paymentId: 'P-9' }, { messageId: 'b' });
    await waitFor(() => events.some((e) => e.payload.event === 'duplicate'), 'the second is a duplicate by paymentId');
    assert.equal(processed.length, 1);
  });

  for (const [url, said] of [
    ['redis+sentinel://app:S3cr3t@127.0.0.1:26379', 'Redis URL must name the master after the sentinels'],
    ['redis+cluster://app:S3cr3t@127.0.0.1:6379/0', 'Redis URL: a cluster has no databases or names in its path (/0)'],
    ['rediss+cluster://app:S3cr3t@127.0.0.1:6379', 'Redis URL: TLS (rediss+cluster://) is not supported with Sentinel or Cluster yet'],
  ] as const) {
    it(`a Sentinel / Cluster URL that cannot be used stops the consumer naming what is wrong, never the password: ${url.replace(/S3cr3t/, '…')}`, async () => {
      await loadFlow([
        tab(),
        brokerNode(),
        configNode(names),
        { id: 'store', type: 'retry-dedupe', kind: 'redis', url, prefix: `test-flow-${tag}:` },
        consumerNode([['seen']], { dedupe: 'store' }),
        { id: 'seen', type: 'helper', z: 'flow' },
      ]);
      await waitFor(() => statusText('consumer').includes(said), `the consumer says: ${said}`);
      assert.equal(lastStatus('consumer')?.fill, 'red');
      assert.doesNotMatch(statusText('consumer'), /S3cr3t/);
    });
  }

  it('a key prefix with braces is refused for a cluster (the scope is the hash tag)', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      { id: 'store', type: 'retry-dedupe', kind: 'redis', url: 'redis+cluster://127.0.0.1:6379', prefix: 'app:{dedupe}:' },
      consumerNode([['seen']], { dedupe: 'store' }),
      { id: 'seen', type: 'helper', z: 'flow' },
    ]);
    await waitFor(() => statusText('consumer').includes("Key prefix 'app:{dedupe}:' has a { or }"), 'the consumer names the prefix');
  });

  it('a Redis store that stops pauses the consumer (red, naming the store), nothing lost; it consumes again when Redis is back', async function () {
    this.timeout(90_000);
    if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
    const server: PrivateServer = await startPrivateRedis();
    try {
      const { processed } = await loadDedupeFlow([{ id: 'store', type: 'retry-dedupe', kind: 'redis', url: server.url }]);
      await broker.publish(names.mainExchange, names.routingKey, {}, { messageId: 'before' });
      await waitFor(() => processed.length === 1, 'a message processed while Redis answers');
      await server.stop();
      for (let i = 0; i < 5; i++) await broker.publish(names.mainExchange, names.routingKey, {}, { messageId: `during-${i}` });
      await waitFor(() => statusText('consumer').startsWith('dedup store down: redis 127.0.0.1:'), 'the red status naming the store');
      assert.equal(lastStatus('consumer')?.fill, 'red');
      await waitFor(async () => (await broker.consumerCount(names.mainQueue)) === 0, 'the consumer stopped taking messages');
      assert.ok(processed.length <= 1, 'nothing processed blindly while the store is down');
      await server.start();
      await waitFor(() => processed.length === 6, 'all messages processed once Redis is back', 60_000);
      assert.deepEqual(new Set(processed.map((m) => m.amqp.properties.messageId)).size, 6, 'each message processed once');
      await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'nothing left');
      // The recovery is good news: logged at info level (40), not as a warning (30).
      const recovered = helper
        .log()
        .args.map(([entry]: [{ id?: string; level?: number; msg?: unknown }]) => entry)
        .filter((entry: { id?: string; msg?: unknown }) => entry.id === 'consumer' && String(entry.msg).includes('answers again'));
      assert.deepEqual(recovered.map((entry: { level?: number }) => entry.level), [40]);
    } finally {
      await helper.unload();
      await server.remove();
    }
  });
});
