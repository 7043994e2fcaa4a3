/**
 * Batch msgs settled item by item against the real broker (issue 51, the settle side). The batch msg
 * is built here by hand from a plain consumer's single deliveries — `{payload, amqp: {config, queue,
 * batch, items}}`, each item a msg.amqp with its msg.retry — as a consumer in batch mode builds it:
 * one poison item among 50 parked alone at attempt 1 (from per-item msg.errors, and found by bisect
 * without them), the other 49 acked once; msg.outcomes / msg.errors that cannot be used settle
 * nothing and name the index; a batch settled twice settles nothing twice; park-publisher's msg.park.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, loadFlow, logLines } from '../helpers/node-red';
import type { ConsumerSessions } from '../../src/nodes/shared/consumer-sessions';

type Msg = Record<string, any>;

const RULES = [{ name: 'constraint', match: 'code', value: '23514', kind: 'permanent' }];

/** One multi-row statement: any bad row fails the whole batch with the constraint's code (as PostgreSQL does). */
const statement = `
  if (msg.payload.some((row) => row.bad)) { const e = new Error('new row violates check constraint'); e.code = '23514'; msg.error = e; return [null, msg]; }
  return [msg, null];`;

/** A database that answers per row (Elasticsearch _bulk, InfluxDB lines): msg.errors by index, the rest acked. */
const perRow = `
  const errors = {};
  msg.payload.forEach((row, i) => { if (row.bad) errors[i] = { message: 'row ' + i + ' refused', code: '23514' }; });
  msg.errors = errors;
  return msg;`;

describe('batch settle: a batch msg settled item by item (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let singles: Msg[];
  let events: Msg[];

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('batchsettle');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  async function load(extra: Array<Record<string, unknown>>): Promise<void> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', retryDelay: '200', maxAttempts: '3', errorRules: RULES }),
      consumerNode([['collect'], ['events']], { prefetch: '100', events: true, statsEvery: '0', outputs: 2 }),
      { id: 'collect', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      ...extra,
    ]);
    singles = [];
    events = [];
    helper.getNode('collect').on('input', (m: Msg) => singles.push(m));
    helper.getNode('events').on('input', (m: Msg) => events.push(m.payload));
    await broker.waitForConsumer(names.mainQueue);
  }

  /** Publishes `count` rows (the ones in `bad` bad), waits for their single deliveries and builds one batch msg of them, in order. */
  async function batchOf(count: number, bad: number[] = []): Promise<Msg> {
    for (let i = 0; i < count; i++) await broker.publish(names.mainExchange, names.routingKey, { n: i, bad: bad.includes(i) }, { messageId: `row-${i}` });
    await waitFor(() => singles.length === count, `${count} deliveries`);
    const rows = [...singles].sort((a, b) => a.payload.n - b.payload.n);
    return {
      payload: rows.map((m) => m.payload),
      amqp: { config: 'config', queue: names.mainQueue, batch: { id: 'test-1', size: count, split: 0 }, items: rows.map((m) => ({ ...m.amqp, retry: m.retry })) },
    };
  }

  /** The consumer's events by kind of settle, each message id once per event. */
  function settled(event: string): string[] {
    return events.filter((e) => e.event === event).map((e) => e.messageId as string).sort();
  }

  /** One poison item among 50: exactly it parked, at attempt 1, with its reason; the other 49 acked once; nothing left. */
  async function assertPoisonAlone(poison: number): Promise<void> {
    await waitFor(() => events.length === 50, 'the 50 items settled');
    assert.deepEqual(settled('parked'), [`row-${poison}`]);
    assert.equal(settled('acked').length, 49);
    assert.equal(new Set(settled('acked')).size, 49, 'each acked once');
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the poison item parked');
    const parked = await broker.take(names.parkingQueue);
    assert.deepEqual(JSON.parse(parked.content.toString()), { n: poison, bad: true });
    assert.equal(parked.properties.headers?.['retry-attempt'], 1);
    assert.equal(parked.properties.headers?.['park-error-kind'], 'permanent');
    assert.equal(await broker.messageCount(names.mainQueue), 0);
    assert.equal(await broker.messageCount(names.retryQueue), 0);
  }

  it('per-item msg.errors classified item by item: the poison item parked at attempt 1, the other 49 acked once', async () => {
    await load([{ id: 'work', type: 'function', z: 'flow', func: perRow, wires: [['ack']] }]);
    const batch = await batchOf(50, [17]);
    helper.getNode('work').receive(batch);
    await assertPoisonAlone(17);
    const parked = events.find((e) => e.event === 'parked');
    assert.equal(parked?.reason, 'permanent (constraint): row 17 refused');
  });

  it('bisect: a batch that failed as a whole is split and sent again until only the poison item is left, parked at attempt 1', async () => {
    await load([
      { id: 'work', type: 'function', z: 'flow', func: statement, outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', bisect: true, wires: [] },
    ]);
    const batch = await batchOf(50, [33]);
    // The consumer of this test is not in batch mode: its resend is what a batch-mode consumer registers (out of output 1, to the flow).
    const sent: Msg[] = [];
    const consumers = (helper.getNode('config') as unknown as { consumers: ConsumerSessions }).consumers;
    consumers.resendOf = () => (half) => {
      // What the half is as sent (the function node below sets msg.error on the same object).
      sent.push({ ...half, amqp: { ...(half.amqp as Msg) } });
      helper.getNode('work').receive(half);
    };
    helper.getNode('work').receive(batch);
    await assertPoisonAlone(33);
    // 50 → 25 → 13 → 7 → 4 → 2 → 1: two halves a level, 6 levels.
    assert.equal(sent.length, 12, `statements after the first: ${sent.map((m) => m.amqp.batch.id).join(' ')}`);
    assert.ok(sent.every((m) => m.error === undefined && m.payload.length === m.amqp.items.length && m.amqp.batch.size === m.amqp.items.length));
    assert.deepEqual(sent.slice(0, 2).map((m) => [m.amqp.batch.id, m.amqp.batch.split, m.payload.length]), [['test-1.1', 1, 25], ['test-1.2', 1, 25]]);
  });

  it('bisect without a consumer that can send halves again: the batch is retried as a whole, with a warning', async () => {
    await load([{ id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', bisect: true, wires: [] }]);
    const batch = await batchOf(3, [1]);
    batch.error = { message: 'statement failed', code: '23514' };
    helper.getNode('retry').receive(batch);
    await waitFor(() => events.length === 3, 'the 3 items settled');
    assert.deepEqual(settled('retried'), ['row-0', 'row-1', 'row-2']);
    assert.ok(logLines().some((l) => /batch test-1: its consumer cannot send halves again .* the 3 items are retried as a whole/.test(l)));
  });

  it('an outcome or an index that cannot be used: one error naming it, nothing settled; a correct settle then ends them', async () => {
    await load([
      { id: 'catch', type: 'catch', z: 'flow', scope: ['ack'], wires: [['caught']] },
      { id: 'caught', type: 'helper', z: 'flow' },
    ]);
    const caught: Msg[] = [];
    helper.getNode('caught').on('input', (m: Msg) => caught.push(m));
    const batch = await batchOf(5);
    helper.getNode('ack').receive({ ...batch, outcomes: { 0: 'ack', 2: 'done' } });
    helper.getNode('ack').receive({ ...batch, errors: { 5: 'no such row' } });
    await waitFor(() => caught.length === 2, 'both errors caught');
    assert.deepEqual(caught.map((m) => m.error.message), [
      "Error: msg.outcomes[2]: 'done' is not an outcome ('ack', 'retry', 'park' or {action, reason, error, delay})",
      'Error: msg.errors[5]: out of range, the batch has 5 items (0 to 4)',
    ]);
    const session = sessionOf();
    assert.ok(batch.amqp.items.every((item: Msg) => session.settles.issued(item.deliveryId)), 'every item still in flight, item 0 too');
    assert.equal(events.length, 0);
    helper.getNode('ack').receive({ ...batch, outcomes: { 2: 'park' } });
    await waitFor(() => events.length === 5, 'all 5 settled');
    assert.deepEqual([settled('acked').length, settled('parked')], [4, ['row-2']]);
  });

  it('a batch settled twice: a warning naming the indexes, nothing settled twice', async () => {
    await load([]);
    const batch = await batchOf(4);
    helper.getNode('ack').receive(batch);
    await waitFor(() => events.length === 4, 'the 4 items acked');
    helper.getNode('ack').receive(batch);
    await waitFor(() => logLines().some((l) => l.startsWith('batch test-1: items 0, 1, 2, 3 not settled: ')), 'the warning');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(events.length, 4, 'no item settled twice');
    assert.equal(errorsOf('ack').length, 0, 'a warning, not an error');
  });

  it("park-publisher: every item parked but those msg.outcomes names; the msg goes on once with msg.park listing the parked items", async () => {
    await load([
      { id: 'park', type: 'park-publisher', z: 'flow', reason: 'batch refused', wires: [['parked']] },
      { id: 'parked', type: 'helper', z: 'flow' },
    ]);
    const out: Msg[] = [];
    helper.getNode('parked').on('input', (m: Msg) => out.push(m));
    const batch = await batchOf(3);
    helper.getNode('park').receive({ ...batch, outcomes: ['ack'], errors: { 2: 'row 2 is wrong' } });
    await waitFor(() => out.length === 1, 'the msg sent on');
    assert.deepEqual(
      out[0]!.park.map((p: Msg) => [p.index, p.queue, p.reason, p.attempt]),
      [
        [1, names.parkingQueue, 'batch refused', 1],
        [2, names.parkingQueue, 'row 2 is wrong', 1],
      ],
    );
    await waitFor(() => events.length === 3, 'all settled');
    assert.deepEqual([settled('acked'), settled('parked')], [['row-0'], ['row-1', 'row-2']]);
    assert.equal(await broker.messageCount(names.parkingQueue), 2);
  });
});
