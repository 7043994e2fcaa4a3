/**
 * Edit and replay of one parked message through the parking browser's admin endpoint, on the real
 * broker: the consumer's flow gets the edited body and headers with the link to the original, the
 * original leaves parking, a locked header is refused by name, and nothing happens while settings.js
 * does not allow it. Every edit is in Node-RED's audit log.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;
const EDIT = '/rabbitmq-retry/parking/config/edit';

describe('parking: edit and replay one message (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('parkedit');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    helper.settings({});
    await broker.cleanup();
  });

  /** consumer → park a negative amount (reason from the payload), else ack and pass to `out`. Parks one message, e1. */
  async function parkedOne(settings: Record<string, unknown>): Promise<Msg[]> {
    helper.settings(settings);
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['decide']]),
      { id: 'decide', type: 'function', z: 'flow', func: "if (msg.payload.amount < 0) { msg.error = 'negative amount'; return [null, msg]; } return [msg, null];", outputs: 2, wires: [['ack', 'out'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [[]] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', wires: [[]] },
      { id: 'out', type: 'helper', z: 'flow' },
    ]);
    const out: Msg[] = [];
    helper.getNode('out').on('input', (m: Msg) => out.push(m));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { amount: -5, order: 7 }, { messageId: 'e1', headers: { customer: 'c-1', channel: 'web' } });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'e1 parked');
    return out;
  }

  /** The audit log's entries of the package (level 98) since the load. */
  const audits = (): Msg[] => helper.log().args.map(([entry]: [Msg]) => entry).filter((entry: Msg) => entry.level === 98 && entry.event === 'rabbitmq-retry.edit');

  it('replays the edited copy: the flow sees the edited body and headers with the link to the original, which leaves parking', async () => {
    const out = await parkedOne({ rabbitmqRetry: { editParked: true } });
    const allowed = await helper.request().get(EDIT);
    assert.equal(allowed.status, 200);
    assert.equal(allowed.body.allowed, true);
    assert.deepEqual(allowed.body.locked.prefixes, ['retry-', 'park-', 'x-', 'replay-', 'replayed-']);
    const response = await helper.request().post(EDIT).send({ messageId: 'e1', body: '{"amount": 5, "order": 7}', headers: { customer: 'c-2', note: 'sign fixed' } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.replayed, 1);
    assert.equal(response.body.replayOf, 'e1');
    assert.equal(response.body.remaining, 0);
    await waitFor(() => out.length === 1, 'the edited copy through the flow');
    const seen = out[0]!;
    assert.deepEqual(seen.payload, { amount: 5, order: 7 });
    assert.equal(seen.amqp.headers['replay-of'], 'e1');
    // A replayed copy's record, as every replay's (docs/operations.md): counted, and this edit's replay id.
    assert.equal(seen.amqp.headers['park-replayed'], 1);
    assert.equal(seen.amqp.headers['replay-id'], response.body.replayId);
    assert.match(String(response.body.replayId), /^[0-9a-f-]{36}$/);
    assert.equal(seen.amqp.headers['replayed-by'], 'anonymous');
    assert.ok(!Number.isNaN(Date.parse(seen.amqp.headers['replayed-at'])));
    assert.equal(seen.amqp.headers.customer, 'c-2');
    assert.equal(seen.amqp.headers.note, 'sign fixed');
    // Left out of the edit: removed.
    assert.equal(seen.amqp.headers.channel, undefined);
    assert.equal(seen.amqp.headers['park-reason'], undefined);
    assert.equal(seen.amqp.properties.messageId, response.body.messageId);
    assert.notEqual(seen.amqp.properties.messageId, 'e1');
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the copy acked');
    const [entry] = audits();
    assert.deepEqual(
      { messageId: entry?.messageId, copyId: entry?.copyId, count: entry?.count, replayId: entry?.replayId, headers: entry?.headers, bodyChanged: entry?.bodyChanged, queue: entry?.queue },
      { messageId: 'e1', copyId: response.body.messageId, count: 1, replayId: response.body.replayId, headers: ['channel', 'customer', 'note'], bodyChanged: true, queue: names.parkingQueue },
    );
  });

  it('refuses a locked header by name, a body that is no longer JSON, and a message no longer parked; the original stays parked', async () => {
    const out = await parkedOne({ rabbitmqRetry: { editParked: true } });
    const locked = await helper.request().post(EDIT).send({ messageId: 'e1', body: '{"amount": 5}', headers: { 'retry-attempt': 0 } });
    assert.equal(locked.status, 400);
    assert.match(locked.body.error, /header 'retry-attempt' is locked/);
    const trace = await helper.request().post(EDIT).send({ messageId: 'e1', body: '{"amount": 5}', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    assert.match(trace.body.error, /header 'traceparent' is locked/);
    const notJson = await helper.request().post(EDIT).send({ messageId: 'e1', body: '{"amount": 5', headers: {} });
    assert.equal(notJson.status, 400);
    assert.match(notJson.body.error, /the body is not JSON .* content type is application\/json/);
    const gone = await helper.request().post(EDIT).send({ messageId: 'nope', body: '{}', headers: {} });
    assert.equal(gone.status, 404);
    assert.equal(await broker.messageCount(names.parkingQueue), 1);
    assert.equal(out.length, 0);
    assert.equal(audits().filter((entry) => typeof entry.error === 'string').length, 3, 'each refused edit is in the audit log');
  });

  it('is refused while settings.js does not allow it: off by default, or a list of users and nobody logged in', async () => {
    const out = await parkedOne({});
    const off = await helper.request().post(EDIT).send({ messageId: 'e1', body: '{"amount": 5}', headers: {} });
    assert.equal(off.status, 403);
    assert.match(off.body.error, /editing parked messages is off: set rabbitmqRetry: \{ editParked: true \}/);
    assert.equal((await helper.request().get(EDIT)).body.allowed, false);
    await helper.unload();
    helper.settings({ rabbitmqRetry: { editParked: ['alice'] } });
    await loadFlow([tab(), brokerNode(), configNode(names), { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', wires: [[]] }]);
    const listed = await helper.request().post(EDIT).send({ messageId: 'e1', body: '{"amount": 5}', headers: {} });
    assert.equal(listed.status, 403);
    assert.match(listed.body.error, /nobody is logged in/);
    assert.equal(await broker.messageCount(names.parkingQueue), 1);
    assert.equal(out.length, 0);
  });
});
