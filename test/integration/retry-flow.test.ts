/**
 * The nodes inside a Node-RED runtime (node-red-node-test-helper) against the real broker:
 * ack / retry / park, double settle, stale settle, settle timeout, invalid bodies.
 */
import assert from 'node:assert/strict';
import { Broker, closeConnectionsNamed, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, TEST_BROKER_NAME, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

describe('retry flow in the Node-RED runtime (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('flow');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** Loads a flow: consumer → function(code) with outputs [ack, retry, park] → end nodes; captures what the consumer sends. */
  async function loadDecisionFlow(code: string, options: { consumer?: Record<string, unknown>; config?: Record<string, unknown>; more?: Array<Record<string, unknown>> } = {}): Promise<Msg[]> {
    const flow = [
      tab(),
      brokerNode(),
      configNode(names, options.config),
      consumerNode([['decide', 'seen']], options.consumer),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: code, outputs: 3, wires: [['ack'], ['retry'], ['park']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'park', type: 'park-publisher', z: 'flow', reason: '', wires: [['parked']] },
      { id: 'parked', type: 'helper', z: 'flow' },
      ...(options.more ?? []),
    ];
    await loadFlow(flow);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    if (process.env.DEBUG_FLOW) for (const id of ['consumer', 'ack', 'retry', 'park']) for (const m of ['warn', 'error']) helper.getNode(id).on(`call:${m}`, (c: { args: unknown[] }) => console.log(id, m, String(c.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    return seen;
  }

  const decide = `
    if (msg.payload.amount > 100) { msg.error = 'amount ' + msg.payload.amount + ' is over the limit'; return [null, msg, null]; }
    if (msg.payload.amount < 0) { msg.error = 'negative amount'; return [null, null, msg]; }
    return [msg, null, null];`;

  it('acks a good message, retries a bad one with attempts 1..3 from x-death, then parks it', async () => {
    const seen = await loadDecisionFlow(decide);
    await broker.publish(names.mainExchange, names.routingKey, { amount: 10.23 }, { correlationId: 'good' });
    await broker.publish(names.mainExchange, names.routingKey, { amount: 210.23 }, { correlationId: 'poison', messageId: 'poison-1', headers: { origin: 'test' } });

    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the poison message in the parking queue');
    const parked = await broker.take(names.parkingQueue);
    const headers = parked.properties.headers ?? {};
    assert.deepEqual(JSON.parse(parked.content.toString()), { amount: 210.23 });
    assert.equal(parked.properties.correlationId, 'poison');
    assert.equal(parked.properties.messageId, 'poison-1');
    assert.equal(parked.properties.contentType, 'application/json');
    assert.equal(parked.properties.deliveryMode, 2);
    assert.equal(headers.origin, 'test');
    assert.equal(headers['park-reason'], 'max attempts (3) reached; last error: amount 210.23 is over the limit');
    assert.equal(headers['retry-attempt'], 3);
    assert.equal(headers['park-original-exchange'], names.mainExchange);
    assert.equal(headers['park-original-routing-key'], names.routingKey);
    assert.equal(headers['park-original-queue'], names.mainQueue);

    const poison = seen.filter((m) => m.amqp.properties.correlationId === 'poison');
    assert.deepEqual(poison.map((m) => m.retry.attempt), [1, 2, 3]);
    assert.deepEqual(poison.map((m) => m.retry.remaining), [2, 1, 0]);
    assert.equal(poison[0]!.retry.firstDeathReason, null);
    assert.equal(poison[1]!.retry.firstDeathReason, 'rejected');
    const good = seen.filter((m) => m.amqp.properties.correlationId === 'good');
    assert.equal(good.length, 1);
    assert.equal(good[0]!.topic, names.routingKey);
    assert.equal(typeof good[0]!.amqp.deliveryId, 'string');

    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && (await broker.messageCount(names.retryQueue)) === 0, 'main and retry queues to drain');
    await waitFor(() => /✓1 ↻2 ⚑1 · /.test(lastStatus('consumer')?.text ?? ''), 'the consumer status counters');
  });

  it('parks a permanent failure at once: confirmed publish, then the ack, reported on the park output and the status', async () => {
    await loadDecisionFlow(decide, { consumer: { parkingWatch: '0.2' } });
    const statuses: Array<{ fill?: string; text?: string }> = [];
    helper.getNode('consumer').on('call:status', (c: { args: Array<{ fill?: string; text?: string }> }) => statuses.push(c.args[0]!));
    const parkedMsgs: Msg[] = [];
    helper.getNode('parked').on('input', (msg: Msg) => parkedMsgs.push(msg));
    await broker.publish(names.mainExchange, names.routingKey, { amount: -1 });
    await waitFor(() => parkedMsgs.length === 1, 'the park output');
    assert.deepEqual(parkedMsgs[0]!.park, { queue: names.parkingQueue, reason: 'negative amount', attempt: 1 });
    assert.equal(await broker.messageCount(names.parkingQueue), 1);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the original to be acked');
    // Monitoring: the consumer's status turns yellow while the parking queue holds messages.
    await waitFor(() => statuses.some((st) => st.fill === 'yellow' && /^1 in parking · /.test(String(st.text))), 'the parking depth on the status');
  });

  it('a replay empties the parking queue: the consumer looks again soon, not at its next watch (an hour here)', async () => {
    // Parks the first message it sees, acks the rest (the same message, replayed).
    const parkFirst = `if (!context.get('parked')) { context.set('parked', true); msg.error = 'first time'; return [null, null, msg]; } return [msg, null, null];`;
    const replay = { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', max: '10', wires: [[]] };
    await loadDecisionFlow(parkFirst, { consumer: { parkingWatch: '3600' }, more: [replay] });
    await broker.publish(names.mainExchange, names.routingKey, { amount: 1 });
    await waitFor(() => /^1 in parking · /.test(String(lastStatus('consumer')?.text)), 'the parked message on the status');
    // The look that follows a park has seen it (the metrics give the depth at the last look).
    const lookedAtParking = async (): Promise<number | undefined> => {
      const text = (await helper.request().get('/rabbitmq-retry/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith('rabbitmq_retry_parking_messages{') && l.includes(`"${names.mainQueue}"`));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    await waitFor(async () => (await lookedAtParking()) === 1, 'a look at the parking queue after the park');
    helper.getNode('replay').receive({});
    await waitFor(() => /^✓1 ↻0 ⚑1 · /.test(String(lastStatus('consumer')?.text)), `the parking queue empty on the status (last ${JSON.stringify(lastStatus('consumer'))})`);
    assert.equal(await lookedAtParking(), 0);
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });

  it('a consumer that starts while messages wait in parking says so soon, not at its first watch tick (an hour here)', async () => {
    await loadDecisionFlow(decide);
    await broker.publish(names.mainExchange, names.routingKey, { amount: -1 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked');
    await helper.unload();
    await loadDecisionFlow(decide, { consumer: { parkingWatch: '3600' } });
    await waitFor(() => /^1 in parking · ✓0 /.test(String(lastStatus('consumer')?.text)), `the waiting message on the new consumer's status (last ${JSON.stringify(lastStatus('consumer'))})`);
  });

  it('never acks before the parked copy is confirmed: with the parking queue gone the original stays', async () => {
    const seen = await loadDecisionFlow(decide);
    const errors: string[] = [];
    helper.getNode('park').on('call:error', (call: { args: unknown[] }) => errors.push(String(call.args[0])));
    const warnings: string[] = [];
    helper.getNode('ack').on('call:warn', (call: { args: unknown[] }) => warnings.push(String(call.args[0])));
    await (await broker.ch()).deleteQueue(names.parkingQueue);
    await broker.publish(names.mainExchange, names.routingKey, { amount: -1 }, { messageId: 'unparkable' });
    await waitFor(() => errors.length > 0, 'the park error');
    assert.match(errors[0]!, /could not park message .* returned unroutable/);
    // A failed park is no settle: a later settle (within the pause) is told the message goes back.
    helper.getNode('ack').receive(seen[0]!);
    await waitFor(() => warnings.length > 0, 'the warning of the late ack');
    assert.match(warnings[0]!, /cannot be settled any more: parking failed, so it goes back to '.*main-queue' after a pause; this ack is ignored/);
    // Not acked: after the pause it is back in the queue (or already redelivered to the consumer).
    await (await broker.ch()).assertQueue(names.parkingQueue, { durable: true });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked once the queue is back');
    const parked = await broker.take(names.parkingQueue);
    assert.equal(parked.properties.messageId, 'unparkable');
  });

  it('warns on a second settle of the same message and keeps consuming', async () => {
    const flow = [
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['ack1', 'ack2']]),
      { id: 'ack1', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'ack2', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ];
    await loadFlow(flow);
    const warnings: string[] = [];
    for (const id of ['ack1', 'ack2']) helper.getNode(id).on('call:warn', (call: { args: unknown[] }) => warnings.push(String(call.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    await broker.publish(names.mainExchange, names.routingKey, { n: 2 });
    await waitFor(() => warnings.length === 2, 'two double-settle warnings');
    for (const w of warnings) assert.match(w, /was already settled \(acked\); this retry is ignored/);
    // The channel survived (no 406 unknown delivery tag): both messages are gone, none went to retry.
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the queue to drain');
    assert.equal(await broker.messageCount(names.retryQueue), 0);
    assert.equal((await (await broker.ch()).checkQueue(names.mainQueue)).consumerCount, 1);
  });

  it('retries a message nobody settles within the settle timeout, and parks it when attempts run out', async () => {
    const flow = [tab(), brokerNode(), configNode(names, { maxAttempts: '2' }), consumerNode([['seen']], { settleTimeout: '0.3' }), { id: 'seen', type: 'helper', z: 'flow' }];
    await loadFlow(flow);
    const seen: Msg[] = [];
    const warnings: string[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    helper.getNode('consumer').on('call:warn', (call: { args: unknown[] }) => warnings.push(String(call.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { forgotten: true });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the forgotten message parked');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2]);
    const parked = await broker.take(names.parkingQueue);
    assert.equal(parked.properties.headers?.['park-reason'], 'max attempts (2) reached; last error: not settled within 0.3 s');
    assert.ok(warnings.some((w) => /was not settled within 0.3 s: sent to retry/.test(w)));
    // The park's warning follows the publish confirm, which may come after the copy is counted in the queue.
    await waitFor(() => warnings.some((w) => /was not settled within 0.3 s: parked/.test(w)), 'the parked warning');
  });

  it('warns on a settle after the channel was lost, and the broker redelivers the message', async () => {
    const flow = [
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ];
    await loadFlow(flow);
    const seen: Msg[] = [];
    const warnings: string[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    helper.getNode('ack').on('call:warn', (call: { args: unknown[] }) => warnings.push(String(call.args[0])));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
    await waitFor(() => seen.length === 1, 'the first delivery');
    // The broker closes the shared connection under the consumer, as a broker restart would.
    await closeConnectionsNamed(`node-red ${TEST_BROKER_NAME}`);
    await waitFor(() => seen.length === 2, 'the redelivery after reconnect');
    helper.getNode('ack').receive(seen[0]!);
    await waitFor(() => warnings.length === 1, 'the stale warning');
    assert.match(warnings[0]!, /cannot be settled any more: (consumer channel closed \(with its connection, or by this client\)|connection to the broker lost) before it was settled; the broker redelivers it; this ack is ignored/);
    assert.equal(seen[1]!.amqp.redelivered, true);
    assert.equal(seen[1]!.retry.attempt, 1, 'a redelivery is the same attempt');
    helper.getNode('ack').receive(seen[1]!);
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && (await broker.consumerCount(names.mainQueue)) === 1, 'the redelivered message acked');
  });

  it('parks a JSON body that does not parse, with the reason', async () => {
    await loadDecisionFlow(decide);
    await broker.publish(names.mainExchange, names.routingKey, Buffer.from('{"amount":'), { contentType: 'application/json' });
    const parked = await broker.take(names.parkingQueue);
    assert.match(String(parked.properties.headers?.['park-reason']), /^body is not valid JSON/);
    assert.equal(parked.content.toString(), '{"amount":');
  });

  it('reports a msg without a delivery id as an error', async () => {
    await loadDecisionFlow(decide);
    const errors: string[] = [];
    helper.getNode('ack').on('call:error', (call: { args: unknown[] }) => errors.push(String(call.args[0])));
    helper.getNode('ack').receive({ payload: 'built from scratch' });
    await waitFor(() => errors.length === 1, 'the error');
    assert.match(errors[0]!, /msg.amqp.deliveryId is missing/);
  });

  it('publish: an unroutable message or a missing exchange is an error, and does not disturb parking', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['park']]),
      { id: 'park', type: 'park-publisher', z: 'flow', reason: 'parked by test', wires: [[]] },
      { id: 'unroutable', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: names.mainExchange, routingKey: 'nobody.listens', persistent: true, wires: [[]] },
      { id: 'missing', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: `${names.mainExchange}.missing`, routingKey: 'x', persistent: true, wires: [[]] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    const errors: string[] = [];
    for (const id of ['unroutable', 'missing']) helper.getNode(id).on('call:error', (c: { args: unknown[] }) => errors.push(`${id}: ${String(c.args[0])}`));
    helper.getNode('unroutable').receive({ payload: { n: 1 } });
    helper.getNode('missing').receive({ payload: { n: 2 } });
    await waitFor(() => errors.length === 2, 'both publish errors');
    assert.ok(errors.some((e) => /^unroutable: .*returned unroutable: no queue is bound for exchange/.test(e)), errors.join(' | '));
    assert.ok(errors.some((e) => /^missing: .*exchange '.*\.missing' does not exist \(404 NOT_FOUND/.test(e)), errors.join(' | '));
    // The 404 closed only the publish node's own channel: parking works on.
    await broker.publish(names.mainExchange, names.routingKey, { n: 3 });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked');
  });

  it('publish: a msg that arrives while the broker is still connecting is published once connected', async () => {
    await (await broker.ch()).assertQueue(names.parkingQueue, { durable: true });
    await loadFlow([
      tab(),
      brokerNode(),
      { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: '', routingKey: names.parkingQueue, persistent: true, wires: [['out']] },
      { id: 'out', type: 'helper', z: 'flow' },
    ]);
    const out: Msg[] = [];
    const errors: string[] = [];
    helper.getNode('out').on('input', (m: Msg) => out.push(m));
    helper.getNode('pub').on('call:error', (c: { args: unknown[] }) => errors.push(String(c.args[0])));
    // Straight after deploy, like an inject node set to fire once at start.
    helper.getNode('pub').receive({ payload: { early: true } });
    await waitFor(() => out.length === 1 || errors.length > 0, 'the publish outcome');
    assert.deepEqual(errors, []);
    assert.equal(out[0]!.amqp.published.routingKey, names.parkingQueue);
    assert.equal(await broker.messageCount(names.parkingQueue), 1);
  });
});
