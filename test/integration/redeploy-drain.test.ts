/**
 * A redeploy while messages are in the flow (real broker, Node-RED's own deploys): the stopping consumer
 * cancels first, lets the flow settle what it holds, and only then closes its channel — each message
 * is processed once. When the nodes that settle are stopping too (a full deploy) there is nothing to
 * wait for: the channel closes at once and the broker redelivers (at least once, nothing lost).
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow, logLines, redeploy } from '../helpers/node-red';

/** Records every delivery it sees (message id and consumer tag) in global context, and passes it on after a while. */
const SLOW = `const seen = global.get('seen') || [];
seen.push({ id: msg.amqp.properties.messageId, tag: msg.amqp.consumerTag, attempt: msg.retry.attempt });
global.set('seen', seen);
const fail = msg.payload.fail && seen.filter((s) => s.id === msg.amqp.properties.messageId).length === 1;
setTimeout(() => node.send(fail ? [null, msg] : [msg, null]), msg.payload.fail ? 0 : 1500);`;

interface Seen {
  id: string;
  tag: string;
  attempt: number;
}

describe('redeploy with messages in the flow (real broker)', function () {
  this.timeout(60_000);
  let broker: Broker;
  let names: Names;

  const flow = (consumerName: string, extra: Record<string, unknown> = {}): Array<Record<string, unknown>> => [
    tab(),
    brokerNode(),
    configNode(names),
    consumerNode([['slow']], { name: consumerName, ...extra }),
    { id: 'slow', type: 'function', z: 'flow', func: SLOW, outputs: 2, wires: [['ack'], ['retry']] },
    { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
  ];
  // As plain data of this realm (the function node's objects come from its sandbox).
  const seen = (): Seen[] => JSON.parse(JSON.stringify((helper.getNode('slow') as unknown as { context(): { global: { get(key: string): unknown } } }).context().global.get('seen') ?? [])) as Seen[];

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('drain');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  async function publish(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 0; n < count; n += 1) {
      ids.push(`m-${n}`);
      await broker.publish(names.mainExchange, names.routingKey, { n }, { messageId: `m-${n}` });
    }
    return ids;
  }

  /** Loads the flow, publishes `count` messages and waits until ten (the prefetch) are in the slow function. */
  async function tenInFlight(count: number): Promise<string[]> {
    await loadFlow(flow('before'));
    await broker.waitForConsumer(names.mainQueue);
    const ids = await publish(count);
    await waitFor(() => seen().length === 10, 'ten messages in the flow');
    return ids;
  }

  /** After a redeploy that could not settle them: the new flow gets the ten again, each at least once, none lost. */
  async function redelivered(ids: string[]): Promise<void> {
    await waitFor(() => seen().length === 20, 'the ten messages redelivered to the new flow');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'an empty main queue');
    assert.deepEqual([...new Set(seen().map((s) => s.id))].sort(), [...ids].sort());
  }

  it('lets the flow settle what it holds when the consumer alone is redeployed: every message processed once', async () => {
    // Prefetch 10: ten messages are in the slow function when the consumer is redeployed.
    const ids = await tenInFlight(20);
    await redeploy(flow('after'), 'nodes');
    await waitFor(() => new Set(seen().map((s) => s.id)).size === 20, 'every message processed');
    // The new consumer got (and acked) the other ten only: the first ten were acked by the stopping one.
    await waitFor(() => sessionOf().stats.acked === 10, 'the new consumer acking the other ten');
    const processed = seen();
    await helper.unload();
    assert.deepEqual(processed.map((s) => s.id).sort(), [...ids].sort(), 'each message processed exactly once');
    assert.equal(await broker.messageCount(names.mainQueue), 0, 'nothing redelivered after the stop');
    assert.deepEqual(logLines().filter((line) => line.includes('unsettled')), []);
  });

  it('closes at once when the nodes that settle stop too (the whole tab redeployed): redelivered, nothing lost', async () => {
    const ids = await tenInFlight(10);
    // Modified flows: every node of the tab stops (the broker node stays), so nothing can settle the ten.
    await redeploy(flow('after').map((n) => (n.id === 'slow' ? { ...n, name: 'changed' } : n)), 'flows');
    assert.ok(logLines().some((line) => /stopping with 10 messages unsettled \(the nodes that settle them are stopping too\)/.test(line)), logLines().join('\n'));
    await redelivered(ids);
  });

  it('a full deploy (the broker node restarts too) loses nothing', async () => {
    const ids = await tenInFlight(10);
    await redeploy(flow('after'), 'full');
    await redelivered(ids);
  });

  it('ordered: a held message is not run again by the stopping consumer; it goes back to the head of the queue', async () => {
    const ordered = { mode: 'ordered', orderedPause: '60' };
    await loadFlow(flow('before', ordered));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { fail: true }, { messageId: 'held' });
    await waitFor(() => seen().length === 1, 'the first attempt');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the message held unacked');
    await redeploy(flow('after', ordered), 'nodes');
    await waitFor(() => seen().length === 2, 'the message again, from the new consumer');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'an empty main queue');
    const [first, second] = seen();
    assert.notEqual(second?.tag, first?.tag, 'run again by the new consumer, not by the stopping one');
    assert.equal(seen().length, 2);
  });
});
