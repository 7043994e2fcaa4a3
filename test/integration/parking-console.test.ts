/**
 * The operator's console on the real broker, from a flow (park-replay): search without consuming,
 * replay redirected to another queue (the copy says who and when; unroutable stays parked), and a
 * paced replay that stops when its canary is parked again, or replays everything once fixed. Through
 * the admin API: a group's page with the group's count beside the queue's total, and a paced replay's
 * start and end in the audit log with the same request fields.
 */
import assert from 'node:assert/strict';
import { Broker, uniqueName, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { actOn as act, helper, loadFlow, redeploy } from '../helpers/node-red';

/** The audit events written since the last load (Node-RED's log at level 98), as RED.log.audit got them. */
function auditEvents(): Array<Record<string, any>> {
  return helper
    .log()
    .args.map(([entry]: [Record<string, any>]) => entry)
    .filter((entry: Record<string, any>) => entry.level === 98 && String(entry.event).startsWith('rabbitmq-retry.'));
}
import type { RetryConfigNode } from '../../src/nodes/shared/retry-config-node';

type Msg = Record<string, any>;

describe('parking console: search, redirect, paced replay (real broker)', function () {
  this.timeout(120_000);
  let broker: Broker;
  let names: Names;
  let fixer: string;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('parkconsole');
    fixer = uniqueName('parkconsole-fixer');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue, fixer);
    broker.track('exchange', names.mainExchange, names.retryExchange);
    await (await broker.ch()).assertQueue(fixer, { durable: false, autoDelete: false });
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → park while flow.fixed is unset (reason from the payload), else ack; one park-replay node per action. */
  const flow = (): Array<Record<string, unknown>> => [
      tab(),
      brokerNode(),
      configNode(names, { routingKeys: 'rk' }),
      consumerNode([['decide']]),
      { id: 'decide', type: 'function', z: 'flow', func: "if (flow.get('fixed')) return [msg, null]; msg.error = msg.payload.why; return [null, msg];", outputs: 2, wires: [['ack'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [[]] },
      { id: 'fix', type: 'change', z: 'flow', rules: [{ t: 'set', p: 'fixed', pt: 'flow', to: 'true', tot: 'bool' }], wires: [] },
      { id: 'peek', type: 'park-replay', z: 'flow', config: 'config', action: 'peek', max: '50', wires: [['out']] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', max: '50', wires: [['out']] },
      { id: 'purge', type: 'park-replay', z: 'flow', config: 'config', action: 'purge', wires: [['out']] },
      { id: 'out', type: 'helper', z: 'flow' },
  ];

  async function load(): Promise<{ out: Msg[]; errors: string[] }> {
    await loadFlow(flow());
    const out: Msg[] = [];
    const errors: string[] = [];
    helper.getNode('out').on('input', (m: Msg) => out.push(m));
    for (const id of ['peek', 'replay', 'purge']) helper.getNode(id).on('call:error', (c: { args: unknown[] }) => errors.push(String(c.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    return { out, errors };
  }

  async function park(count: number, why: (i: number) => string): Promise<void> {
    const before = await broker.messageCount(names.parkingQueue);
    for (let i = 1; i <= count; i += 1) await broker.publish(names.mainExchange, 'rk', { n: i, why: why(i) }, { messageId: `p${i}` });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === before + count, `${count} parked`);
  }

  it('searches by reason text and message id without consuming, saying how many it looked at; purges the same filtered set', async () => {
    const io = await load();
    await park(6, (i) => (i % 2 === 0 ? `Gateway TIMEOUT #${i}` : `card ${i} declined`));
    const found = (await act('peek', { filter: { reason: 'gateway timeout' } }, io)).payload;
    assert.deepEqual(found.messages.map((m: Msg) => m.messageId), ['p2', 'p4', 'p6']);
    assert.equal(found.matched, 3);
    assert.equal(found.lookedAt, 6);
    assert.equal(found.total, 6);
    const byId = (await act('peek', { filter: { messageId: 'P5' }, window: 3 }, io)).payload;
    assert.equal(byId.lookedAt, 3, 'a window of 3 looks at 3');
    assert.equal(byId.matched, 0, 'p5 is past the window');
    const later = (await act('peek', { filter: { from: new Date(Date.now() + 3600_000).toISOString() } }, io)).payload;
    assert.equal(later.matched, 0);
    assert.equal(await broker.messageCount(names.parkingQueue), 6, 'nothing consumed');
    const purged = (await act('purge', { filter: { reason: 'declined' } }, io)).payload;
    assert.equal(purged.purged, 3);
    assert.deepEqual(
      auditEvents().map((e) => `${e.event} ${e.by} ${e.count} ${e.filter}`),
      ['rabbitmq-retry.purge flow purge 3 reason contains "declined"'],
      'a search is no action: only the purge is audited',
    );
    const left = (await act('peek', {}, io)).payload;
    assert.deepEqual(left.messages.map((m: Msg) => m.messageId), ['p2', 'p4', 'p6']);
  });

  it('redirects a filtered set to another queue: confirmed, the copy says who replayed it, when and where; the originals are gone', async () => {
    const io = await load();
    await park(3, (i) => `reason ${i}`);
    const result = (await act('replay', { messageIds: ['p1', 'p3'], redirect: { exchange: '', routingKey: fixer } }, io)).payload;
    assert.equal(result.replayed, 2);
    assert.deepEqual(result.redirect, { exchange: '', routingKey: fixer });
    const copy = await broker.take(fixer);
    const headers = copy.properties.headers!;
    assert.equal(copy.properties.messageId, 'p1');
    assert.equal(headers['replayed-by'], 'flow replay');
    assert.ok(!Number.isNaN(Date.parse(String(headers['replayed-at']))));
    assert.equal(headers['replay-id'], result.replayId);
    assert.equal(headers['replay-redirected-to'], `(default exchange) / ${fixer}`);
    assert.equal(headers['park-reason'], undefined);
    assert.equal((await broker.take(fixer)).properties.messageId, 'p3');
    const left = (await act('peek', {}, io)).payload;
    assert.deepEqual(left.messages.map((m: Msg) => m.messageId), ['p2']);
    // In the audit log, from the flow: no user, the node instead.
    const [event] = auditEvents();
    assert.equal(event?.event, 'rabbitmq-retry.redirect');
    assert.equal(event?.by, 'flow replay');
    assert.equal(event?.count, 2);
    assert.equal(event?.queue, names.parkingQueue);
    assert.equal(event?.filter, 'message ids p1, p3');
    assert.deepEqual(event?.redirect, { exchange: '', routingKey: fixer });
  });

  it('an unroutable redirect replays nothing: the message stays parked and the error says so', async () => {
    const io = await load();
    await park(1, () => 'boom');
    await assert.rejects(act('replay', { redirect: { exchange: '', routingKey: `${fixer}-missing` } }, io), /unroutable.*stays parked/);
    assert.equal(await broker.messageCount(names.parkingQueue), 1);
    // Audited too: what it reached (nothing) and why it stopped.
    const [event] = auditEvents();
    assert.equal(event?.event, 'rabbitmq-retry.redirect');
    assert.equal(event?.count, 0);
    assert.match(event?.error, /unroutable/);
    await assert.rejects(act('replay', { redirect: { exchange: 7 } }, io), /redirect must be \{exchange, routingKey\}/);
  });

  it('a paced replay stops when its canary is parked again, and says so; the rest stay parked', async () => {
    const io = await load();
    await park(5, (i) => `still broken ${i}`);
    const result = (await act('replay', { rate: 50, canary: 1, canaryWait: 10 }, io)).payload;
    assert.equal(result.state, 'stopped', JSON.stringify(result));
    assert.equal(result.replayed, 1);
    assert.equal(result.parkedAgain, 1);
    assert.match(result.message, /1 of the 1 canary messages were parked again/);
    const left = (await act('peek', {}, io)).payload;
    assert.deepEqual(left.messages.map((m: Msg) => `${m.messageId}:${String(m.headers['replay-id'] ?? '')}`), ['p2:', 'p3:', 'p4:', 'p5:', `p1:${result.job}`]);
    // The configuration owns the job: the sidebar lists it.
    const config = helper.getNode('config') as unknown as RetryConfigNode;
    assert.equal(config.replayJobs.get(result.job)?.state, 'stopped');
    assert.deepEqual(
      auditEvents().map((e) => `${e.event} ${e.by} ${e.state ?? ''}`),
      ['rabbitmq-retry.paced-replay flow replay ', 'rabbitmq-retry.paced-replay-end flow replay stopped'],
    );
  });

  it('once fixed, a paced replay replays the canaries, then the rest at the rate', async () => {
    const io = await load();
    await park(4, (i) => `broken ${i}`);
    helper.getNode('fix').receive({});
    const result = (await act('replay', { rate: 100, canary: 2, canaryWait: 1 }, io)).payload;
    assert.equal(result.state, 'done', JSON.stringify(result));
    assert.equal(result.replayed, 4);
    assert.equal(result.canaryReplayed, 2);
    assert.equal(result.parkedAgain, 0);
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });

  it('a redeploy stops a paced replay between two messages: every message is either replayed once or still parked', async () => {
    await load();
    await park(12, (i) => `broken ${i}`);
    const config = helper.getNode('config') as unknown as RetryConfigNode;
    helper.getNode('replay').receive({ rate: 4, redirect: { exchange: '', routingKey: fixer } });
    await waitFor(() => (config.replayJobs.running()?.replayed ?? 0) >= 2, 'two replayed');
    await redeploy(flow(), 'full');
    const job = config.replayJobs.list()[0]!;
    assert.equal(job.state, 'cancelled', job.message ?? '');
    assert.match(job.message ?? '', /^stopped as (the broker connection|its retry config) closed/);
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) + (await broker.messageCount(fixer)) === 12, 'every message parked or replayed');
    const replayed: string[] = [];
    for (let n = await broker.messageCount(fixer); n > 0; n -= 1) replayed.push(String((await broker.take(fixer)).properties.messageId));
    assert.equal(replayed.length, job.replayed);
    assert.equal(new Set(replayed).size, replayed.length, 'none replayed twice');
    assert.ok(job.replayed < 12, 'stopped before the end');
  });

  it("the admin API's page of a group says the group's count beside the whole queue's total", async () => {
    await load();
    await park(20, (i) => (i % 2 === 0 ? `amount ${i} over the limit` : `customer ${i} unknown`));
    const groups = await helper.request().get('/rabbitmq-retry/parking/config/groups');
    assert.equal(groups.status, 200, groups.text);
    const key = String(groups.body.groups.find((g: Msg) => String(g.key).startsWith('amount'))?.key);
    const page = await helper.request().get(`/rabbitmq-retry/parking/config/group?key=${encodeURIComponent(key)}&limit=4`);
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(page.body.messages.map((m: Msg) => m.messageId), ['p2', 'p4', 'p6', 'p8']);
    assert.equal(page.body.more, true);
    assert.equal(page.body.count, 10, "the group's messages");
    assert.equal(page.body.total, 20, "the parking queue's");
    const last = await helper.request().get(`/rabbitmq-retry/parking/config/group?key=${encodeURIComponent(key)}&offset=8`);
    assert.deepEqual([last.body.messages.length, last.body.more, last.body.count, last.body.total], [2, false, 10, 20]);
  });

  it("a paced replay from the admin API: its start says redirect null, its end carries the start's request fields (path, ip, user)", async () => {
    await load();
    await park(3, (i) => `still broken ${i}`);
    const started = await helper.request().post('/rabbitmq-retry/parking/config/paced').send({ rate: 50, canary: 1, canaryWait: 10 });
    assert.equal(started.status, 202, started.text);
    await waitFor(() => auditEvents().some((e) => e.event === 'rabbitmq-retry.paced-replay-end'), 'the end in the audit log');
    const [start, end] = auditEvents();
    assert.equal(start?.event, 'rabbitmq-retry.paced-replay');
    assert.equal(start?.redirect, null);
    assert.ok(start !== undefined && 'redirect' in start, 'the start names redirect even when not redirected');
    assert.equal(end?.event, 'rabbitmq-retry.paced-replay-end');
    assert.equal(end?.state, 'stopped');
    assert.equal(end?.path, '/rabbitmq-retry/parking/config/paced');
    assert.deepEqual([end?.path, end?.ip, end?.user, end?.by], [start?.path, start?.ip, start?.user, 'admin API']);
    assert.ok(end?.ip, 'the address of the request that started it');
  });
});
