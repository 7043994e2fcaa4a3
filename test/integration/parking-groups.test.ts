/**
 * Groups of parked messages on the real broker: the parking queue by folded park reason, read without
 * consuming; a group's messages a page at a time; replay of one group moving exactly its messages;
 * park-replay's reason filter; the replay counter on a message parked again.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { actOn as act, helper, loadFlow, statusTexts } from '../helpers/node-red';
import { readParkedGroup } from '../../src/nodes/park-replay/queue-actions';
import type { RetryConfigNode } from '../../src/nodes/shared/retry-config-node';

type Msg = Record<string, any>;

const OVER = 'amount {n} is over the {n} limit';
const UNKNOWN = 'customer {s} unknown';
const TIMEOUT = 'timeout after {n}ms';

describe('parking queue: groups by reason, group replay, reason filter (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('parkgroups');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → park while flow.fixed is unset (reason from the payload), else ack; parking nodes. */
  async function load(): Promise<{ out: Msg[]; errors: string[] }> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { routingKeys: 'rk' }),
      consumerNode([['decide']]),
      { id: 'decide', type: 'function', z: 'flow', func: "if (flow.get('fixed')) return [msg, null]; msg.error = msg.payload.why; return [null, msg];", outputs: 2, wires: [['ack'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [[]] },
      { id: 'groups', type: 'park-replay', z: 'flow', config: 'config', action: 'groups', wires: [['out']] },
      { id: 'peek', type: 'park-replay', z: 'flow', config: 'config', action: 'peek', max: '50', wires: [['out']] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', max: '50', wires: [['out']] },
      { id: 'purge', type: 'park-replay', z: 'flow', config: 'config', action: 'purge', wires: [['out']] },
      { id: 'replayCustomers', type: 'park-replay', z: 'flow', config: 'config', max: '50', reason: '/^customer .* unknown$/', wires: [['out']] },
      { id: 'badReason', type: 'park-replay', z: 'flow', config: 'config', reason: '/(unclosed/', wires: [['out']] },
      { id: 'out', type: 'helper', z: 'flow' },
    ]);
    const out: Msg[] = [];
    const errors: string[] = [];
    helper.getNode('out').on('input', (m: Msg) => out.push(m));
    for (const id of ['groups', 'peek', 'replay', 'purge', 'replayCustomers', 'badReason']) helper.getNode(id).on('call:error', (c: { args: unknown[] }) => errors.push(String(c.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    return { out, errors };
  }

  /** Parks g1..g6 in this order: three over the limit, two unknown customers, one timeout. */
  const WHY = ['amount 1200 is over the 1000 limit', "customer 'Bob' unknown", 'amount 99.5 is over the 50 limit', 'timeout after 5000ms', "customer 'Ann' unknown", 'amount 7 is over the 5 limit'];
  async function parkSix(): Promise<void> {
    for (const [i, why] of WHY.entries()) {
      await broker.publish(names.mainExchange, 'rk', { n: i + 1, why }, { messageId: `g${i + 1}` });
      await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === i + 1, `g${i + 1} parked`);
    }
  }

  /** The parking queue's messageIds in order, with their replay counters, as a peek sees them. */
  async function parked(io: { out: Msg[]; errors: string[] }): Promise<string[]> {
    const { messages } = (await act('peek', {}, io)).payload;
    return messages.map((m: Msg) => (m.replays > 0 ? `${m.messageId}×${m.replays}` : m.messageId));
  }

  it('groups the parking queue by folded reason, largest first, with counts and times, and leaves it in place', async () => {
    const io = await load();
    await parkSix();
    const { payload } = await act('groups', {}, io);
    assert.equal(payload.action, 'groups');
    assert.equal(payload.count, 6);
    assert.equal(payload.remaining, 6);
    assert.equal(payload.ungrouped, 0);
    assert.deepEqual(payload.groups.map((g: Msg) => [g.key, g.count, g.example]), [
      [OVER, 3, WHY[0]],
      [UNKNOWN, 2, WHY[1]],
      [TIMEOUT, 1, WHY[3]],
    ]);
    const over = payload.groups[0];
    assert.ok(over.firstAt <= over.lastAt);
    assert.equal(over.replayed, 0);
    assert.deepEqual(statusTexts('groups').at(-1), 'groups: 3, 6 parked');
    // Nothing consumed, nothing reordered.
    assert.deepEqual(await parked(io), ['g1', 'g2', 'g3', 'g4', 'g5', 'g6']);
  });

  it("lists one group's messages a page at a time, with their positions in the queue", async () => {
    await load();
    await parkSix();
    const config = helper.getNode('config') as unknown as RetryConfigNode;
    const page = (offset: number) => readParkedGroup(OVER, config, { offset, limit: 2, previewBytes: 100, userId: 'parking-test' });
    const first = await page(0);
    assert.deepEqual(first.messages.map((m) => [m.messageId, m.position]), [['g1', 0], ['g3', 2]]);
    assert.equal(first.more, true);
    assert.equal(first.total, 6);
    const second = await page(2);
    assert.deepEqual(second.messages.map((m) => m.messageId), ['g6']);
    assert.equal(second.more, false);
    assert.equal(await broker.messageCount(names.parkingQueue), 6);
  });

  it('replaying one group moves exactly its messages; parked again, they carry the replay counter and the group says so', async () => {
    const io = await load();
    await parkSix();
    // Not fixed: the replayed messages fail again and are parked again, behind the others.
    const result = await act('replay', { group: OVER }, io);
    // (`remaining` may already count some of them parked again.)
    assert.equal(result.payload.replayed, 3);
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 6, 'the replayed messages parked again');
    assert.deepEqual(await parked(io), ['g2', 'g4', 'g5', 'g1×1', 'g3×1', 'g6×1']);
    const groups = (await act('groups', {}, io)).payload.groups;
    assert.deepEqual(groups.map((g: Msg) => [g.key, g.count, g.replayed]), [[OVER, 3, 3], [UNKNOWN, 2, 0], [TIMEOUT, 1, 0]]);
    // Replayed again: the counter counts on.
    await act('replay', { group: OVER }, io);
    await waitFor(async () => (await parked(io)).join() === 'g2,g4,g5,g1×2,g3×2,g6×2', 'parked again, replayed twice');
  });

  it("park-replay's reason filter (a /regular expression/) replays only those; an invalid one stops the node naming the field", async () => {
    const io = await load();
    await parkSix();
    (helper.getNode('decide') as any).context().flow.set('fixed', true);
    const result = await act('replayCustomers', {}, io);
    assert.deepEqual(result.payload, { action: 'replay', count: 2, remaining: 4, replayed: 2, replayId: result.payload.replayId });
    assert.match(result.payload.replayId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(await parked(io), ['g1', 'g3', 'g4', 'g6']);
    // A msg's own reason (part of the text) wins over the node's.
    assert.equal((await act('replayCustomers', { reason: 'TIMEOUT' }, io)).payload.replayed, 1);
    assert.deepEqual(await parked(io), ['g1', 'g3', 'g6']);
    assert.match(statusTexts('badReason')[0] ?? '', /^reason: invalid regular expression/);
    await assert.rejects(act('badReason', {}, io), /reason: invalid regular expression/);
    assert.deepEqual(await parked(io), ['g1', 'g3', 'g6']);
  });

  it('purging one group removes exactly its messages; a group no message has removes none', async () => {
    const io = await load();
    await parkSix();
    assert.deepEqual((await act('purge', { group: OVER }, io)).payload, { action: 'purge', count: 3, remaining: 3, purged: 3 });
    assert.deepEqual(await parked(io), ['g2', 'g4', 'g5']);
    assert.deepEqual((await act('purge', { group: 'amount {n}' }, io)).payload, { action: 'purge', count: 0, remaining: 3, purged: 0 });
    assert.deepEqual(await parked(io), ['g2', 'g4', 'g5']);
  });
});
