/**
 * The operator's side of the parking queue on the real broker: peek without removing, purge (all or
 * selected), replay selected by messageId, and the quorum delivery-limit guard.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { actOn as act, helper, loadFlow, statusTexts } from '../helpers/node-red';
import { readParkedMessage } from '../../src/nodes/park-replay/queue-actions';
import type { RetryConfigNode } from '../../src/nodes/shared/retry-config-node';

type Msg = Record<string, any>;

describe('parking queue: peek, purge, replay by messageId (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('parkops');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /**
   * consumer → park everything while flow.fixed is unset (reason from the payload), else ack;
   * one parking node per action. Returns the outputs of the parking nodes.
   */
  async function load(config: Record<string, unknown> = {}, watchers: Array<Record<string, unknown>> = []): Promise<{ out: Msg[]; errors: string[] }> {
    const to = [['out', ...watchers.map((w) => String(w.id))]];
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { routingKeys: 'rk.a, rk.b', ...config }),
      consumerNode([['decide']]),
      { id: 'decide', type: 'function', z: 'flow', func: "if (flow.get('fixed')) return [msg, null]; msg.error = msg.payload.why; return [null, msg];", outputs: 2, wires: [['ack'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [[]] },
      { id: 'peek', type: 'park-replay', z: 'flow', config: 'config', action: 'peek', max: '10', wires: to },
      { id: 'purge', type: 'park-replay', z: 'flow', config: 'config', action: 'purge', max: '10', wires: to },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', max: '10', resetAttempts: true, wires: to },
      { id: 'byTopic', type: 'park-replay', z: 'flow', config: 'config', action: 'topic', max: '10', wires: to },
      { id: 'out', type: 'helper', z: 'flow' },
      ...watchers,
    ]);
    const out: Msg[] = [];
    const errors: string[] = [];
    helper.getNode('out').on('input', (m: Msg) => out.push(m));
    for (const id of ['peek', 'purge', 'replay', 'byTopic']) helper.getNode(id).on('call:error', (c: { args: unknown[] }) => errors.push(String(c.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    return { out, errors };
  }

  /** Parks four messages: p1..p4, routing keys a, b, a, b, reasons 'timeout' / 'bad card'. */
  async function parkFour(): Promise<void> {
    const why = ['timeout at the bank', 'bad card', 'timeout at the bank', 'bad card'];
    for (let i = 0; i < 4; i += 1) {
      await broker.publish(names.mainExchange, i % 2 === 0 ? 'rk.a' : 'rk.b', { n: i + 1, why: why[i] }, { messageId: `p${i + 1}` });
      // One at a time: the parking order is the publish order.
      await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === i + 1, `p${i + 1} parked`);
    }
  }

  /** Everything in the parking queue, in order, without removing it (read through the broker's own API, for comparison). */
  async function order(): Promise<string[]> {
    const ch = await broker.model.createChannel();
    const ids: string[] = [];
    for (;;) {
      const m = await ch.get(names.parkingQueue, { noAck: false });
      if (m === false) break;
      ids.push(String(m.properties.messageId));
    }
    await ch.close();
    return ids;
  }

  it('peek shows parked messages as plain data and leaves them in place, in order', async () => {
    const io = await load();
    await parkFour();
    const result = await act('peek', { max: 3 }, io);
    const { messages, total } = result.payload;
    assert.equal(total, 4);
    assert.deepEqual(messages.map((m: Msg) => m.messageId), ['p1', 'p2', 'p3']);
    assert.deepEqual(messages.map((m: Msg) => m.position), [0, 1, 2]);
    const first = messages[0];
    assert.equal(first.reason, 'timeout at the bank');
    assert.equal(first.attempts, 1);
    assert.equal(first.originalExchange, names.mainExchange);
    assert.equal(first.originalRoutingKey, 'rk.a');
    assert.equal(first.originalQueue, names.mainQueue);
    assert.equal(first.contentType, 'application/json');
    assert.deepEqual(JSON.parse(first.preview), { n: 1, why: 'timeout at the bank' });
    assert.equal(first.previewEncoding, 'utf8');
    assert.equal(first.truncated, false);
    assert.ok(!Number.isNaN(Date.parse(first.parkedAt)));
    assert.equal(first.headers['park-reason'], 'timeout at the bank');
    assert.equal(messages[1].originalRoutingKey, 'rk.b');
    // Nothing removed, nothing reordered: a second peek and the broker agree.
    const again = await act('peek', {}, io);
    assert.deepEqual(again.payload.messages.map((m: Msg) => m.messageId), ['p1', 'p2', 'p3', 'p4']);
    assert.deepEqual(await order(), ['p1', 'p2', 'p3', 'p4']);
  });

  it("every action says what it did in msg.payload (action, count, remaining): the demo's debug node shows each, never undefined", async () => {
    // The debug node wired to the parking node in examples/flows.json, as shipped.
    const demo = JSON.parse(readFileSync(path.join(__dirname, '../../examples/flows.json'), 'utf8')) as Msg[];
    const parking = demo.find((n) => n.type === 'park-replay')!;
    const shipped = demo.find((n) => n.id === parking.wires[0][0])!;
    assert.equal(shipped.type, 'debug');
    const io = await load({}, [{ ...shipped, id: 'demo-debug', z: 'flow', wires: [] }]);
    await parkFour();
    const peeked = await act('peek', { max: 3 }, io);
    assert.deepEqual([peeked.payload.action, peeked.payload.count, peeked.payload.remaining, peeked.payload.total], ['peek', 3, 4, 4]);
    (helper.getNode('decide') as any).context().flow.set('fixed', true);
    await act('replay', { messageIds: ['p1'] }, io);
    await act('purge', { messageIds: ['p2'] }, io);
    const shown = (): string[] => statusTexts('demo-debug').filter((text) => text !== '');
    await waitFor(() => shown().length === 3, 'a debug status per action');
    assert.deepEqual(shown(), ['peek 3 · 4 left', 'replay 1 · 3 left', 'purge 1 · 2 left']);
  });

  it('reads one parked message whole (the parking browser), by messageId or position, and leaves it in place', async () => {
    await load();
    await parkFour();
    const config = helper.getNode('config') as unknown as RetryConfigNode;
    const read = (locator: { messageId?: string; position?: number }, bodyBytes = 1024) => readParkedMessage(locator, config, { limit: 10, bodyBytes, userId: 'parking-test' });
    const third = await read({ messageId: 'p3' });
    assert.equal(third?.position, 2);
    assert.deepEqual(JSON.parse(third?.preview ?? ''), { n: 3, why: 'timeout at the bank' });
    assert.equal(third?.truncated, false);
    const second = await read({ position: 1 }, 4);
    assert.equal(second?.messageId, 'p2');
    assert.equal(second?.preview, '{"n"');
    assert.equal(second?.truncated, true);
    assert.equal(await read({ messageId: 'p9' }), undefined);
    assert.equal(await read({ position: 7 }), undefined);
    assert.deepEqual(await order(), ['p1', 'p2', 'p3', 'p4']);
  });

  it('purge removes the selected messages (by messageId, routing key, reason) and keeps the others in order, or all', async () => {
    const io = await load();
    await parkFour();
    assert.deepEqual((await act('purge', { messageIds: ['p3', 'nope'] }, io)).payload, { action: 'purge', count: 1, remaining: 3, purged: 1 });
    assert.deepEqual(await order(), ['p1', 'p2', 'p4']);
    assert.deepEqual((await act('purge', { routingKey: 'rk.b', reason: 'BAD CARD' }, io)).payload, { action: 'purge', count: 2, remaining: 1, purged: 2 });
    assert.deepEqual(await order(), ['p1']);
    await assert.rejects(act('purge', { messageIds: [] }, io), /msg.messageIds must be a messageId or a non-empty array/);
    assert.deepEqual((await act('purge', {}, io)).payload, { action: 'purge', count: 1, remaining: 0, purged: 1 });
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });

  it('replay selected by messageId: only those go back, the rest stays parked in order', async () => {
    const io = await load();
    await parkFour();
    (helper.getNode('decide') as any).context().flow.set('fixed', true);
    const result = await act('replay', { messageIds: ['p2', 'p4', 'gone'] }, io);
    assert.deepEqual(result.payload, { action: 'replay', count: 2, remaining: 2, replayed: 2, notFound: ['gone'], replayId: result.payload.replayId });
    assert.deepEqual(await order(), ['p1', 'p3']);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the replayed messages acked');
  });

  it('msg.topic picks the action when the node says so; another topic is an error that changes nothing', async () => {
    const io = await load();
    await parkFour();
    assert.equal((await act('byTopic', { topic: 'peek' }, io)).payload.total, 4);
    await assert.rejects(act('byTopic', { topic: 'purge-all' }, io), /msg.topic must be one of replay, peek, purge, groups \(got "purge-all"\)/);
    assert.deepEqual((await act('byTopic', { topic: 'purge', reason: 'timeout' }, io)).payload, { action: 'purge', count: 2, remaining: 2, purged: 2 });
  });

  it('a missing parking queue is an error naming it, for peek, purge and replay', async () => {
    const io = await load();
    await (await broker.ch()).deleteQueue(names.parkingQueue);
    for (const id of ['peek', 'purge', 'replay']) {
      await assert.rejects(act(id, {}, io), new RegExp(`parking queue '${names.parkingQueue}' does not exist`));
    }
  });

  it('a quorum parking queue with a delivery limit refuses peeks (each would count as a delivery), and still purges all', async () => {
    const io = await load({ parkingQueueArgs: '{"x-queue-type":"quorum","x-delivery-limit":5}' });
    await parkFour();
    await assert.rejects(act('peek', {}, io), /is a quorum queue with a delivery limit: every peek/);
    await assert.rejects(act('purge', { reason: 'timeout' }, io), /quorum queue with a delivery limit/);
    assert.equal(await broker.messageCount(names.parkingQueue), 4);
    assert.deepEqual((await act('purge', {}, io)).payload, { action: 'purge', count: 4, remaining: 0, purged: 4 });
  });

  it('failure metadata: the error thrown in a node, caught, retried and parked, with the node and the first and last failure time', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', maxAttempts: '2', retryDelay: '100' }),
      consumerNode([['work']]),
      { id: 'work', type: 'function', z: 'flow', name: 'process payment', func: "throw new TypeError('amount is missing');", outputs: 1, wires: [[]] },
      { id: 'catch', type: 'catch', z: 'flow', scope: ['work'], uncaught: false, wires: [['retry']] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    const parked = await broker.take(names.parkingQueue);
    const h = parked.properties.headers ?? {};
    assert.equal(h['park-error-name'], 'TypeError');
    assert.match(String(h['park-error-message']), /amount is missing/);
    assert.equal(h['park-error-source-id'], 'work');
    assert.equal(h['park-error-source-type'], 'function');
    assert.equal(h['park-error-source-name'], 'process payment');
    const first = Date.parse(String(h['park-first-failure-time']));
    const last = Date.parse(String(h['park-last-failure-time']));
    assert.ok(first <= last, `${String(h['park-first-failure-time'])} <= ${String(h['park-last-failure-time'])}`);
    assert.equal(h['park-last-failure-time'], h['park-time']);
  });
});
