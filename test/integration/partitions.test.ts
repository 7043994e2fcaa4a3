/**
 * Issue 42: partitioned ordered mode in the Node-RED runtime against the real broker. Two consumer
 * nodes on one partitioned configuration stand for two Node-RED instances: per key the order is kept,
 * the standby takes the partitions over, and a failing message holds only its own partition.
 * Issue 53: the instances share the partitions evenly, and hand them over in order as one leaves and comes back.
 */
import assert from 'node:assert/strict';
import { partitionOf } from '../../src/lib/topology/partitions';
import { Broker, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;
const PARTITIONS = 4;
/** The most partitions a test here declares (the queues cleaned up). */
const MOST_PARTITIONS = 6;

describe('partitioned ordered mode (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('partitions');
    for (let i = 0; i < MOST_PARTITIONS; i++) broker.track('queue', `${names.mainQueue}.${i}`, `${names.retryQueue}.${i}`);
    broker.track('queue', names.parkingQueue);
    broker.track('exchange', `${names.mainQueue}.partitions`);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** On how many partitions `who`'s status says it is active (undefined: no such status yet). */
  function activeOn(who: string, partitions = PARTITIONS): number | undefined {
    const m = new RegExp(`^active on (\\d+) of ${partitions} partitions`).exec(lastStatus(`consumer${who}`)?.text ?? '');
    return m ? Number(m[1]) : undefined;
  }

  /** The consumers `whos` share the partitions: one consumer per partition queue, each status ⌊P/M⌋ or ⌈P/M⌉, all of them P. */
  async function sharedEvenly(whos: string[], partitions = PARTITIONS): Promise<void> {
    const shares = (): Array<number | undefined> => whos.map((who) => activeOn(who, partitions));
    const even = (n: number | undefined): boolean => n === Math.floor(partitions / whos.length) || n === Math.ceil(partitions / whos.length);
    await waitFor(() => shares().every(even) && shares().reduce<number>((a, n) => a + (n ?? 0), 0) === partitions, `an even share among ${whos.join(', ')}`);
    for (let i = 0; i < partitions; i++) await waitFor(async () => (await broker.consumerCount(`${names.mainQueue}.${i}`)) === 1, `one consumer on partition ${i}`);
  }

  /** Consumers (A, B by default) on a partitioned configuration; a function that takes 5 ms and fails while `msg.payload.fail` and the global `healed` is unset. */
  async function loadPartitionedFlow(whos = ['A', 'B'], partitions = PARTITIONS, config: Record<string, unknown> = {}): Promise<{ started: Array<{ who: string; key: string; n: number; partition: number }> }> {
    const work = `
      const fail = msg.payload.fail === true && !global.get('healed');
      setTimeout(() => node.send(fail ? [null, msg] : [msg, null]), 5);
      return null;`;
    const consumer = (who: string): Record<string, unknown> => ({
      id: `consumer${who}`,
      type: 'retry-consumer',
      z: 'flow',
      config: 'config',
      mode: 'ordered',
      orderedPause: '0.2',
      settleTimeout: '60',
      decode: 'auto',
      invalidBody: 'park',
      wires: [[`start${who}`, 'work']],
    });
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { mainExchange: '', routingKeys: '', retryExchange: '', partitions: String(partitions), partitionRouting: 'computed', ...config }),
      ...whos.map(consumer),
      ...whos.map((who) => ({ id: `start${who}`, type: 'helper', z: 'flow' })),
      { id: 'work', type: 'function', z: 'flow', func: work, outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', partitions: 'config', key: 'payload.key', keyType: 'msg', wires: [['published']] },
      { id: 'published', type: 'helper', z: 'flow' },
    ]);
    const started: Array<{ who: string; key: string; n: number; partition: number }> = [];
    for (const who of whos) {
      helper.getNode(`start${who}`).on('input', (msg: Msg) => started.push({ who, key: msg.payload.key as string, n: msg.payload.n as number, partition: msg.amqp.partition as number }));
    }
    await sharedEvenly(whos, partitions);
    return { started };
  }

  /** Publishes through the retry-publish node, in order, and waits for every confirm. */
  async function publish(messages: Array<Record<string, unknown>>): Promise<Msg[]> {
    const confirmed: Msg[] = [];
    const listener = (msg: Msg): number => confirmed.push(msg);
    const sink = helper.getNode('published') as unknown as { on(event: string, f: (msg: Msg) => void): void; removeListener(event: string, f: (msg: Msg) => void): void };
    sink.on('input', listener);
    for (const payload of messages) (helper.getNode('pub') as unknown as { receive(msg: Msg): void }).receive({ payload });
    await waitFor(() => confirmed.length === messages.length, 'every publish confirmed');
    sink.removeListener('input', listener);
    return confirmed;
  }

  function byKey(started: Array<{ key: string; n: number }>): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const s of started) out.set(s.key, [...(out.get(s.key) ?? []), s.n]);
    return out;
  }

  it('declares N ordered partition queues and routes each key to its partition; a paused consumer hands its partitions over in order per key', async () => {
    const { started } = await loadPartitionedFlow();
    for (let i = 0; i < PARTITIONS; i++) {
      const info = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(`${names.mainQueue}.${i}`)}`)).json()) as { arguments: Record<string, unknown> };
      assert.equal(info.arguments['x-single-active-consumer'], true, `partition ${i} has a single active consumer`);
    }
    const keys = Array.from({ length: 20 }, (_, k) => `key-${k}`);
    const messages = [];
    for (let n = 1; n <= 10; n++) for (const key of keys) messages.push({ key, n });
    const confirmed = await publish(messages);
    assert.ok(confirmed.every((m) => m.amqp.published.exchange === `${names.mainQueue}.partitions`));
    assert.ok(confirmed.every((m) => m.amqp.published.partition === partitionOf(m.payload.key as string, PARTITIONS)));

    await waitFor(() => started.length >= 60, 'a part of the messages');
    // Each consumer had its share; one pauses (as an instance leaving would): the other takes its partitions over.
    assert.deepEqual(new Set(started.map((s) => s.who)), new Set(['A', 'B']), 'both had partitions');
    helper.getNode('consumerA').receive({ topic: 'pause' });
    await waitFor(() => new Set(started.map((s) => `${s.key}/${s.n}`)).size === 200, 'every message');

    for (const s of started) assert.equal(s.partition, partitionOf(s.key, PARTITIONS), `${s.key} came from its partition`);
    const handedOver = new Set(started.filter((s) => s.who === 'A').map((s) => s.partition));
    assert.ok(started.some((s) => s.who === 'B' && handedOver.has(s.partition)), 'B took over a partition of A');
    assertInOrder(started, 10);
    await waitFor(() => activeOn('B') === 4, `B's status (${lastStatus('consumerB')?.text})`);
  });

  /** Per key in publish order (1…count); a message a stopped consumer held may come again (redelivered), never out of order. */
  function assertInOrder(started: Array<{ key: string; n: number }>, count: number): void {
    for (const [key, ns] of byKey(started)) {
      const firsts = ns.filter((n, i) => ns.indexOf(n) === i);
      assert.deepEqual(firsts, Array.from({ length: count }, (_, i) => i + 1), `${key}: ${ns.join(',')}`);
      for (let i = 1; i < ns.length; i++) assert.ok(ns[i]! >= ns[i - 1]!, `${key} never goes back: ${ns.join(',')}`);
    }
  }

  for (const type of ['classic', 'quorum'] as const) {
    it(`three consumers share 6 ${type} partitions 2/2/2; one leaves (3/3) and comes back (2/2/2): nothing lost, per key in order through every hand-over`, async () => {
      const partitions = 6;
      const { started } = await loadPartitionedFlow(['A', 'B', 'C'], partitions, { mainQueueArgs: JSON.stringify({ 'x-queue-type': type }) });
      const keys = Array.from({ length: 30 }, (_, k) => `acct-${k}`);
      let n = 0;
      const round = async (): Promise<void> => {
        n++;
        await publish(keys.map((key) => ({ key, n })));
      };
      const rounds = async (count: number): Promise<void> => {
        for (let i = 0; i < count; i++) await round();
      };
      await rounds(5);
      helper.getNode('consumerC').receive({ topic: 'pause' });
      await rounds(5); // published while C hands its partitions over
      await sharedEvenly(['A', 'B'], partitions);
      await waitFor(() => /active on 0 of 6 partitions/.test(lastStatus('consumerC')?.text ?? ''), `C holds none while paused (${lastStatus('consumerC')?.text})`);
      helper.getNode('consumerC').receive({ topic: 'resume' });
      await rounds(5); // published while C takes its share back
      await sharedEvenly(['A', 'B', 'C'], partitions);
      await rounds(3);
      await waitFor(() => new Set(started.map((s) => `${s.key}/${s.n}`)).size === keys.length * n, `every message (${new Set(started.map((s) => `${s.key}/${s.n}`)).size} of ${keys.length * n})`);
      assertInOrder(started, n);
      for (const s of started) assert.equal(s.partition, partitionOf(s.key, partitions));
      assert.ok(started.some((s) => s.who === 'C' && s.n > 15), 'C works again after it came back');
      for (let i = 0; i < partitions; i++) await waitFor(async () => (await broker.messageCount(`${names.mainQueue}.${i}`)) === 0, `partition ${i} empty`);
    });
  }

  it('a failing message holds only its own partition; the others go on, and it goes on in order once it succeeds', async () => {
    const { started } = await loadPartitionedFlow();
    const global = (helper.getNode('work') as unknown as { context(): { global: { set(key: string, value: unknown): void } } }).context().global;
    global.set('healed', false);
    const keys = Array.from({ length: 24 }, (_, k) => `account-${k}`);
    const poison = keys[0]!;
    const held = partitionOf(poison, PARTITIONS);
    const messages: Array<Record<string, unknown>> = [{ key: poison, n: 1, fail: true }];
    for (let n = 2; n <= 5; n++) messages.push({ key: poison, n });
    for (let n = 1; n <= 5; n++) for (const key of keys.slice(1)) messages.push({ key, n });
    await publish(messages);

    const elsewhere = keys.slice(1).filter((k) => partitionOf(k, PARTITIONS) !== held);
    const sameHeld = keys.slice(1).filter((k) => partitionOf(k, PARTITIONS) === held);
    assert.ok(elsewhere.length > 0 && sameHeld.length > 0, 'keys in the held partition and in others');
    await waitFor(() => elsewhere.every((k) => started.filter((s) => s.key === k).length === 5), 'every key of the other partitions');
    await waitFor(() => started.filter((s) => s.key === poison).length >= 3, 'the failing message tried again');
    // Nothing behind the failing message in its partition started: neither its key's next messages nor other keys there.
    assert.deepEqual([...new Set(started.filter((s) => s.partition === held).map((s) => `${s.key}/${s.n}`))], [`${poison}/1`]);
    const who = started.find((s) => s.partition === held)!.who;
    await waitFor(() => (lastStatus(`consumer${who}`)?.text ?? '').startsWith(`partition ${held}: blocked since`), `the blocked partition named (${lastStatus(`consumer${who}`)?.text})`);

    global.set('healed', true);
    await waitFor(() => new Set(started.map((s) => `${s.key}/${s.n}`)).size === messages.length, 'every message');
    assertInOrder(started, 5);
    for (let i = 0; i < PARTITIONS; i++) await waitFor(async () => (await broker.messageCount(`${names.mainQueue}.${i}`)) === 0, `partition ${i} empty`);
  });
  it('the events output names each partition queue; a replay is one event and goes back to its own partition', async () => {
    const route = `return msg.payload.bad ? [null, msg] : [msg, null];`;
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { mainExchange: '', routingKeys: '', retryExchange: '', partitions: String(PARTITIONS), partitionRouting: 'computed' }),
      { id: 'consumer', type: 'retry-consumer', z: 'flow', config: 'config', mode: 'ordered', orderedPause: '0.2', settleTimeout: '60', decode: 'auto', invalidBody: 'park', events: true, statsEvery: '0', wires: [['seen', 'route'], ['events']] },
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'route', type: 'function', z: 'flow', func: route, outputs: 2, wires: [['ack'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', reason: 'bad', wires: [[]] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', action: 'replay', max: '10', resetAttempts: true, wires: [[]] },
      { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', partitions: 'config', key: 'payload.key', keyType: 'msg', wires: [['published']] },
      { id: 'published', type: 'helper', z: 'flow' },
    ]);
    const seen: Msg[] = [];
    const events: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    helper.getNode('events').on('input', (msg: Msg) => events.push(msg.payload as Msg));
    for (let i = 0; i < PARTITIONS; i++) await waitFor(async () => (await broker.consumerCount(`${names.mainQueue}.${i}`)) === 1, `the consumer on partition ${i}`);
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    await publish([...keys.map((key) => ({ key, n: 1 })), { key: 'bad', n: 1, bad: true }]);
    await waitFor(() => events.filter((e) => e.event === 'acked').length === keys.length && events.some((e) => e.event === 'parked'), 'the settle events');
    const queueOf = (key: string): string => `${names.mainQueue}.${partitionOf(key, PARTITIONS)}`;
    for (const msg of seen) assert.equal(msg.amqp.partition, partitionOf(msg.payload.key as string, PARTITIONS));
    const parked = events.find((e) => e.event === 'parked')!;
    assert.equal(parked.queue, queueOf('bad'), 'the parked event names the partition queue');
    assert.deepEqual(new Set(events.filter((e) => e.event === 'acked').map((e) => e.queue)), new Set(keys.map(queueOf)));

    const before = seen.length;
    (helper.getNode('replay') as unknown as { receive(msg: Msg): void }).receive({ payload: '' });
    await waitFor(() => events.some((e) => e.event === 'replayed') && seen.length > before, 'the replay');
    const again = seen.slice(before).find((m) => m.payload.key === 'bad')!;
    assert.equal(again.amqp.partition, partitionOf('bad', PARTITIONS), 'replayed into its own partition');
    await waitFor(() => events.filter((e) => e.event === 'parked').length === 2, 'parked again');
    assert.equal(events.filter((e) => e.event === 'replayed').length, 1, 'one replayed event, not one per partition');
  });
});
