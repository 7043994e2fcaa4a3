/**
 * Issue 51, the consumer's side: a retry consumer in batch mode in the Node-RED runtime against the
 * real broker — full batches of the right size with the prefetch that follows, a partial batch after
 * its wait, flushed at once on pause and on a redeploy (before the drain: the flow settles it), dropped
 * with a lost channel (never sent stale), refused with ordered mode and partitions. The items are
 * settled one by one here (a retry-settle per item): settling a whole batch msg is the settle side's.
 */
import assert from 'node:assert/strict';
import { Broker, closeConnectionsNamed, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, TEST_BROKER_NAME, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, lastStatus, loadFlow, redeploy } from '../helpers/node-red';

type Msg = Record<string, any>;

/** Each item of a batch msg on to the ack node as a single delivery's msg; the batches' message ids recorded in global context. */
const ACK_EACH = `const batches = global.get('batches') || [];
batches.push(msg.amqp.items.map((i) => i.properties.messageId));
global.set('batches', batches);
return [msg.amqp.items.map((item) => ({ amqp: item }))];`;

describe('retry consumer in batch mode (real broker)', function () {
  this.timeout(60_000);
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('batch');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  const flow = (consumer: Record<string, unknown>, config: Record<string, unknown> = {}): Array<Record<string, unknown>> => [
    tab(),
    brokerNode(),
    configNode(names, config),
    consumerNode([['seen']], { batch: true, ...consumer }),
    { id: 'seen', type: 'helper', z: 'flow' },
    { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
  ];

  /** Loads a consumer in batch mode whose msgs a helper node collects (unsettled until `ackAll`). */
  async function load(consumer: Record<string, unknown>): Promise<Msg[]> {
    await loadFlow(flow(consumer));
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    return seen;
  }

  async function publish(from: number, count: number): Promise<void> {
    for (let n = from; n < from + count; n += 1) await broker.publish(names.mainExchange, names.routingKey, { n }, { messageId: `m-${n}` });
  }

  /** Acks every item of the batch msgs, one single msg per item. */
  function ackAll(batches: Msg[]): void {
    for (const batch of batches) for (const item of batch.amqp.items) helper.getNode('ack').receive({ amqp: item });
  }

  const inFlight = (n: number): boolean => sessionOf().stats.inFlight === n;
  /** Items in the batch msgs. */
  const itemsIn = (batches: Msg[]): number => batches.reduce((sum: number, m) => sum + (m.amqp.items as unknown[]).length, 0);
  const ns = (msg: Msg | undefined): number[] => (msg?.payload as Array<{ n: number }>).map((p) => p.n);

  it('sends one msg per full batch: payloads in order, each item its delivery\'s msg.amqp and retry; the prefetch follows (2 × batch size)', async () => {
    const seen = await load({ batchSize: '5', batchWait: '60000', prefetch: '2' });
    await waitFor(async () => {
      const res = await management('GET', `queues/${vhostPath()}/${encodeURIComponent(names.mainQueue)}`);
      const details = ((await res.json()) as { consumer_details?: Array<{ prefetch_count: number }> }).consumer_details ?? [];
      return details[0]?.prefetch_count === 10;
    }, 'the consumer with prefetch 10 (2 × 5, more than the configured 2)');
    await publish(0, 10);
    await waitFor(() => seen.length === 2, 'two batch msgs');
    assert.deepEqual(seen.map(ns), [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]);
    const [first] = seen;
    assert.equal(first?.amqp.items.length, 5);
    assert.deepEqual(first?.amqp.batch, { id: first?._msgid, size: 5, split: 0 });
    assert.equal(first?.amqp.config, 'config');
    assert.equal(first?.amqp.queue, names.mainQueue);
    assert.equal(first?.amqp.deliveryId, undefined, 'a batch msg has no deliveryId');
    assert.equal(first?.retry, undefined, 'a batch msg has no msg.retry');
    const item = first?.amqp.items[0];
    assert.equal(typeof item.deliveryId, 'string');
    assert.equal(item.properties.messageId, 'm-0');
    assert.equal(item.routingKey, names.routingKey);
    assert.deepEqual([item.retry.attempt, item.retry.maxAttempts], [1, 3]);
    assert.notEqual(seen[0]?.amqp.batch.id, seen[1]?.amqp.batch.id);

    ackAll(seen);
    await waitFor(() => sessionOf().stats.acked === 10 && inFlight(0), 'every item acked');
    assert.equal(await broker.messageCount(names.mainQueue), 0);
  });

  it('a batch size above half the prefetch raises the prefetch; a larger configured prefetch stays', async () => {
    await load({ batchSize: '300', prefetch: '1000' });
    const prefetch = async (): Promise<number | undefined> => {
      const res = await management('GET', `queues/${vhostPath()}/${encodeURIComponent(names.mainQueue)}`);
      return ((await res.json()) as { consumer_details?: Array<{ prefetch_count: number }> }).consumer_details?.[0]?.prefetch_count;
    };
    await waitFor(async () => (await prefetch()) === 1000, 'prefetch 1000 (configured, more than 2 × 300)');
    await helper.unload();
    await load({ batchSize: '700', prefetch: '1000' });
    await waitFor(async () => (await prefetch()) === 1400, 'prefetch 1400 (2 × 700)');
  });

  it('sends a partial batch once its wait runs out', async () => {
    const seen = await load({ batchSize: '100', batchWait: '300' });
    await publish(0, 3);
    await waitFor(() => itemsIn(seen) === 3, 'the three in partial batches');
    assert.ok(seen.every((m) => m.amqp.items.length < 100));
    assert.deepEqual(seen.flatMap(ns), [0, 1, 2]);
    ackAll(seen);
    await waitFor(() => sessionOf().stats.acked === 3, 'acked');
  });

  it('sends a partial batch at once on pause; what arrives later waits for resume', async () => {
    const seen = await load({ batchSize: '100', batchWait: '60000' });
    await publish(0, 3);
    await waitFor(() => inFlight(3), 'three deliveries collected');
    assert.equal(seen.length, 0, 'held while consuming: its wait is a minute');
    helper.getNode('consumer').receive({ topic: 'pause' });
    await waitFor(() => seen.length === 1, 'the partial batch on pause');
    assert.deepEqual(ns(seen[0]), [0, 1, 2]);
    await waitFor(() => (lastStatus('consumer')?.text ?? '').startsWith('paused'), 'paused');
    ackAll(seen);
    await waitFor(() => sessionOf().stats.acked === 3, 'the paused consumer still settles the batch');
    await publish(3, 2);
    assert.equal(await broker.messageCount(names.mainQueue), 2, 'nothing taken while paused');
    helper.getNode('consumer').receive({ topic: 'resume' });
    await waitFor(() => inFlight(2), 'the two after resume');
    helper.getNode('consumer').receive({ topic: 'pause' });
    await waitFor(() => seen.length === 2, 'the second partial batch');
    assert.deepEqual(ns(seen[1]), [3, 4]);
    ackAll(seen.slice(1));
    await waitFor(() => sessionOf().stats.acked === 5, 'all acked');
  });

  it('sends its partial batch before the drain when it is redeployed alone: the flow settles it, nothing is processed twice', async () => {
    const settleFlow = (name: string): Array<Record<string, unknown>> =>
      flow({ name, batchSize: '100', batchWait: '60000' })
        // No helper node: a redeploy does not know its type.
        .filter((n) => n.id !== 'seen')
        .map((n) => (n.id === 'consumer' ? { ...n, wires: [['each']] } : n))
        .concat([{ id: 'each', type: 'function', z: 'flow', func: ACK_EACH, outputs: 1, wires: [['ack']] }]);
    await loadFlow(settleFlow('before'));
    await broker.waitForConsumer(names.mainQueue);
    await publish(0, 3);
    await waitFor(() => inFlight(3), 'three deliveries collected');
    const batches = (): string[][] => JSON.parse(JSON.stringify((helper.getNode('each') as unknown as { context(): { global: { get(key: string): unknown } } }).context().global.get('batches') ?? [])) as string[][];
    assert.deepEqual(batches(), []);
    await redeploy(settleFlow('after'), 'nodes');
    await waitFor(() => batches().length === 1, 'the partial batch sent by the stopping consumer');
    assert.deepEqual(batches(), [['m-0', 'm-1', 'm-2']]);
    await broker.waitForConsumer(names.mainQueue);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'an empty main queue');
    // The new consumer got nothing: the stopping one's batch was settled during its drain.
    await waitFor(() => sessionOf().stats.acked === 0 && sessionOf().stats.inFlight === 0, 'the new consumer idle');
    const sent = batches();
    await helper.unload();
    assert.deepEqual(sent, [['m-0', 'm-1', 'm-2']], 'settled by the flow during the drain: none redelivered');
    assert.equal(await broker.messageCount(names.mainQueue), 0, 'nothing went back to the queue');
  });

  it('sends a partial batch at once when the rate limit starts holding deliveries back', async () => {
    // 2 a second, a burst of one: the first delivery passes, the second is held.
    const seen = await load({ batchSize: '100', batchWait: '60000', rateLimit: '2' });
    await publish(0, 5);
    await waitFor(() => seen.length === 1, 'the partial batch sent when the rate limit held the second delivery');
    assert.deepEqual(ns(seen[0]), [0]);
    helper.getNode('consumer').receive({ topic: 'pause' });
    await waitFor(() => (lastStatus('consumer')?.text ?? '').startsWith('paused'), 'paused');
    await waitFor(() => inFlight(itemsIn(seen)), 'every delivery the flow holds sent in a batch');
    ackAll(seen);
    const sent = itemsIn(seen);
    await waitFor(() => sessionOf().stats.acked === sent && inFlight(0), 'acked');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 5 - sent, 'the held ones back in the queue');
  });

  it('drops a partial batch whose channel is lost: never sent stale; the broker delivers the messages again', async () => {
    const seen = await load({ batchSize: '100', batchWait: '60000' });
    await publish(0, 3);
    await waitFor(() => inFlight(3), 'three deliveries collected');
    await closeConnectionsNamed(`node-red ${TEST_BROKER_NAME}`);
    await waitFor(() => inFlight(0), 'the lost deliveries ended');
    await waitFor(() => inFlight(3), 'the three delivered again');
    helper.getNode('consumer').receive({ topic: 'pause' });
    await waitFor(() => seen.length === 1, 'one batch, sent on pause');
    assert.deepEqual(ns(seen[0]), [0, 1, 2]);
    assert.ok(seen[0]?.amqp.items.every((i: Msg) => i.redelivered === true), 'the redelivered copies, not the lost ones');
    ackAll(seen);
    await waitFor(() => sessionOf().stats.acked === 3, 'acked');
    assert.equal(seen.length, 1);
  });

  it('is refused with ordered mode, with a sentence saying why', async () => {
    await loadFlow(flow({ mode: 'ordered' }));
    await waitFor(() => errorsOf('consumer').length > 0, 'the error');
    assert.match(errorsOf('consumer')[0] ?? '', /not started: .*batch mode keeps no per-key order \(a retried item would let the later items of its key overtake it\)/);
    assert.equal(lastStatus('consumer')?.fill, 'red');
    assert.equal(await broker.consumerCount(names.mainQueue), 0);
  });

  it('is refused on a partitioned configuration', async () => {
    await loadFlow(flow({}, { mainExchange: '', routingKeys: '', retryExchange: '', partitions: '2', partitionRouting: 'computed' }));
    await waitFor(() => errorsOf('consumer').length > 0, 'the error');
    assert.match(errorsOf('consumer')[0] ?? '', /batch mode keeps no per-key order/);
  });
});
