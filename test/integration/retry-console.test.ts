/**
 * The retry console node on the real broker: the parking groups as table rows, a replay or purge of a
 * group that asks first and runs only once confirmed (nothing moves before; a dismissed question does
 * nothing), the history and the consumers' state as Dashboard 2.0 widgets take them, and each action
 * in Node-RED's audit log.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;
const OUTPUTS = ['groups', 'history', 'state', 'ask', 'done'] as const;

describe('retry console: groups, history, state, replay / purge behind a confirmation (real broker)', function () {
  let broker: Broker;
  let names: Names;
  const out: Record<(typeof OUTPUTS)[number], Msg[]> = { groups: [], history: [], state: [], ask: [], done: [] };
  const errors: string[] = [];

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('console');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
    for (const k of OUTPUTS) out[k] = [];
    errors.length = 0;
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { routingKeys: 'rk' }),
      consumerNode([['decide']]),
      { id: 'decide', type: 'function', z: 'flow', func: "if (flow.get('fixed')) return [msg, null]; msg.error = msg.payload.why; return [null, msg];", outputs: 2, wires: [['ack'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [[]] },
      { id: 'console', type: 'retry-console', z: 'flow', config: 'config', every: '0', minutes: '5', series: 'retried,parked', wires: OUTPUTS.map((k) => [`out-${k}`]) },
      ...OUTPUTS.map((k) => ({ id: `out-${k}`, type: 'helper', z: 'flow' })),
    ]);
    for (const k of OUTPUTS) helper.getNode(`out-${k}`).on('input', (m: Msg) => out[k].push(m));
    helper.getNode('console').on('call:error', (c: { args: unknown[] }) => errors.push(String(c.args[0])));
    await broker.waitForConsumer(names.mainQueue);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** Sends a msg to the console and waits until `output` has one more msg (or the node fails). */
  async function send(msg: Msg, output: (typeof OUTPUTS)[number]): Promise<Msg> {
    const before = { n: out[output].length, e: errors.length };
    helper.getNode('console').receive(msg);
    await waitFor(() => out[output].length > before.n || errors.length > before.e, `the console's ${output}`);
    if (errors.length > before.e) throw new Error(errors.at(-1));
    return out[output].at(-1)!;
  }

  async function parkThree(): Promise<void> {
    for (const [i, why] of ['card 1234 declined', 'card 9876 declined', 'timeout at the bank'].entries()) {
      await broker.publish(names.mainExchange, 'rk', { why }, { messageId: `m${i}` });
      await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === i + 1, `m${i} parked`);
    }
  }

  /** The audit entries Node-RED's log got (RED.log.audit writes at level 98). */
  const audits = (): Msg[] => helper.log().args.map(([entry]: [Msg]) => entry).filter((entry: Msg) => entry.level === 98);

  it('sends the groups as table rows, the history as chart points of its series, the state in one line', async function () {
    await parkThree();
    const groups = await send({ topic: 'groups' }, 'groups');
    assert.deepEqual(groups.parking.total, 3);
    assert.deepEqual(
      groups.payload.map((r: Msg) => [r.reason, r.count, r.replayed]),
      [
        ['card 1234 declined', 2, 0],
        ['timeout at the bank', 1, 0],
      ],
    );
    const history = await send({ topic: 'history' }, 'history');
    assert.equal(history.action, 'replace');
    assert.deepEqual([...new Set(history.payload.map((p: Msg) => p.series))], ['retried', 'parked']);
    assert.equal(history.payload.filter((p: Msg) => p.series === 'parked').reduce((a: number, p: Msg) => a + Number(p.value), 0), 3);
    const state = await send({ topic: 'status' }, 'state');
    assert.match(state.payload, /^ready — [^:]+: consuming · kill switch off$/);
    await assert.rejects(send({ topic: 'nonsense' }, 'groups'), /unknown msg\.topic "nonsense"/);
  });

  it('asks before a replay of a group, does nothing when dismissed, replays it once confirmed (audited), then sends fresh groups without it', async function () {
    await parkThree();
    const [cards] = (await send({ topic: 'groups' }, 'groups')).payload as Msg[];
    const asked = await send({ topic: 'replay', payload: cards }, 'ask');
    assert.equal(asked.payload, 'Replay the 2 parked messages of “card 1234 declined” to where they were first published, with their attempts reset?');
    assert.equal(asked.asked, 'replay');
    assert.equal(await broker.messageCount(names.parkingQueue), 3, 'nothing moved before the confirmation');
    // Dismissed (Dashboard 2.0 sends the question back with the button's word): nothing happens.
    helper.getNode('console').receive({ ...asked, payload: 'dismiss_clicked' });
    // Fixed meanwhile: the replayed payments go through.
    (helper.getNode('decide') as unknown as { context(): { flow: { set(key: string, value: unknown): void } } }).context().flow.set('fixed', true);
    const done = await send({ ...asked, payload: 'confirm_clicked', topic: '' }, 'done'); // a widget may have cleared the topic
    assert.equal(done.payload, 'Replayed 2, 1 left in parking.');
    assert.equal(out.done.length, 1, 'the dismissed question did nothing');
    await waitFor(() => out.groups.length === 2, 'fresh groups after the replay');
    assert.deepEqual(out.groups[1]!.payload.map((r: Msg) => r.reason), ['timeout at the bank'], 'the replayed group left the table');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && (await broker.messageCount(names.parkingQueue)) === 1, 'the replayed payments processed');
    const [entry, ...more] = audits();
    assert.equal(more.length, 0);
    assert.deepEqual({ ...entry, level: undefined, timestamp: undefined }, { event: 'rabbitmq-retry.replay', source: 'retry-console', node: 'console', config: 'config', queue: names.parkingQueue, group: cards!.group, count: 2, remaining: 1, by: 'retry-console console', level: undefined, timestamp: undefined });
  });

  it('purges a group named by msg.group at once with msg.confirmed, audited', async function () {
    await parkThree();
    const [, timeout] = (await send({ topic: 'groups' }, 'groups')).payload as Msg[];
    const asked = await send({ topic: 'purge', group: timeout!.group }, 'ask');
    assert.equal(asked.payload, 'Delete the parked messages of “timeout at the bank”? This cannot be undone.');
    const done = await send({ topic: 'purge', group: timeout!.group, confirmed: true }, 'done');
    assert.equal(done.payload, 'Deleted 1, 2 left in parking.');
    assert.equal(await broker.messageCount(names.parkingQueue), 2);
    assert.deepEqual(
      audits().map((a) => [a.event, a.group, a.count]),
      [['rabbitmq-retry.purge', timeout!.group, 1]],
    );
  });
});
