/**
 * Error kinds (a retry configuration's errorRules) in the Node-RED runtime against the real broker:
 * a permanent failure parks after one attempt with its reason and `park-error-kind`, nothing in the
 * retry queue; a transient one retries; `done` acks; ordered mode parks a permanent one instead of
 * holding the line; a JSONata rule; no rules behave as before; rules that cannot be used stop the
 * configuration naming the rule.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';
import { HTTP_STARTING_RULES } from '../../src/lib/classify/rules';

type Msg = Record<string, any>;

/** What the "call" did, from the payload: the status it answered, or a PostgreSQL error code. */
const work = `
  const p = msg.payload;
  if (p.status >= 400) { msg.statusCode = p.status; msg.error = 'HTTP ' + p.status; return [null, msg]; }
  if (p.pg) { const e = new Error('duplicate key value violates unique constraint'); e.code = p.pg; msg.error = e; return [null, msg]; }
  if (p.kind) { msg.error = 'refused: ' + p.kind; return [null, msg]; }
  return [msg, null];`;

async function scrape(): Promise<string> {
  return (await helper.request().get('/rabbitmq-retry/metrics')).text;
}

describe('error kinds: errorRules of a retry configuration (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('kinds');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → work → [ack, retry]; the events output to `events`. Returns the msgs work saw and the events. */
  async function load(errorRules: unknown, consumer: Record<string, unknown> = {}): Promise<{ seen: Msg[]; events: Msg[] }> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', retryDelay: '200', maxAttempts: '2', errorRules }),
      consumerNode([['work', 'seen'], ['events']], { events: true, statsEvery: '0', outputs: 2, ...consumer }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'work', type: 'function', z: 'flow', func: work, outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    const seen: Msg[] = [];
    const events: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    helper.getNode('events').on('input', (m: Msg) => events.push(m.payload));
    await broker.waitForConsumer(names.mainQueue);
    return { seen, events };
  }

  it('the HTTP set: a 400 parks after one attempt with the reason and park-error-kind, nothing to retry; a 503 retries', async () => {
    const { seen, events } = await load(HTTP_STARTING_RULES);
    await broker.publish(names.mainExchange, names.routingKey, { status: 400 }, { messageId: 'bad-request' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the 400 parked');
    const parked = await broker.take(names.parkingQueue);
    const headers = parked.properties.headers ?? {};
    assert.equal(headers['park-reason'], 'permanent (HTTP client error): HTTP 400');
    assert.equal(headers['park-error-kind'], 'permanent');
    assert.equal(headers['retry-attempt'], 1);
    assert.deepEqual(seen.filter((m) => m.amqp.properties.messageId === 'bad-request').map((m) => m.retry.attempt), [1], 'one attempt, no retry');
    assert.equal(await broker.messageCount(names.retryQueue), 0);
    await waitFor(() => lastStatus('retry')?.text === 'permanent error: parked at attempt 1', "the retry node's status says why it parked");
    assert.deepEqual(
      events.filter((e) => e.messageId === 'bad-request').map((e) => [e.event, e.kind, e.reason]),
      [['parked', 'permanent', 'permanent (HTTP client error): HTTP 400']],
    );

    await broker.publish(names.mainExchange, names.routingKey, { status: 503 }, { messageId: 'unavailable' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the 503 parked once out of attempts');
    assert.deepEqual(seen.filter((m) => m.amqp.properties.messageId === 'unavailable').map((m) => m.retry.attempt), [1, 2], 'retried');
    const exhausted = await broker.take(names.parkingQueue);
    assert.equal(exhausted.properties.headers?.['park-reason'], 'max attempts (2) reached; last error: HTTP 503');
    assert.equal(exhausted.properties.headers?.['park-error-kind'], 'transient');
    await waitFor(() => events.filter((e) => e.messageId === 'unavailable').length === 2, 'the park of the 503 reported on the events output');
    assert.deepEqual(
      events.filter((e) => e.messageId === 'unavailable').map((e) => [e.event, e.kind]),
      [['retried', 'transient'], ['parked', 'transient']],
    );
    const text = await scrape();
    const line = (outcome: string, kind: string) => `messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="${outcome}",kind="${kind}"}`;
    for (const [outcome, kind, n] of [['parked', 'permanent', 1], ['parked', 'transient', 1], ['retried', 'transient', 1]] as const) {
      assert.ok(text.split('\n').includes(`${line(outcome, kind)} ${n}`), `no "${line(outcome, kind)} ${n}" in:\n${text}`);
    }
  });

  it('a done rule acks (the effect already happened); a JSONata rule is asked when the walk reaches it', async () => {
    const { seen, events } = await load([
      { name: 'unique key', match: 'code', value: '23505', kind: 'done' },
      { name: 'refund refused', match: 'jsonata', value: 'msg.payload.kind = "refund"', kind: 'permanent' },
    ]);
    await broker.publish(names.mainExchange, names.routingKey, { pg: '23505' }, { messageId: 'duplicate-insert' });
    await broker.publish(names.mainExchange, names.routingKey, { kind: 'refund' }, { messageId: 'refund' });
    await waitFor(() => events.length === 2, 'both settled');
    assert.deepEqual(
      events.map((e) => [e.messageId, e.event, e.kind]).sort(),
      [
        ['duplicate-insert', 'acked', 'done'],
        ['refund', 'parked', 'permanent'],
      ],
    );
    const parked = await broker.take(names.parkingQueue);
    assert.equal(parked.properties.headers?.['park-reason'], 'permanent (refund refused): refused: refund');
    assert.equal(await broker.messageCount(names.mainQueue), 0);
    assert.equal(await broker.messageCount(names.retryQueue), 0);
    assert.equal(seen.length, 2);
  });

  it('ordered mode: a permanent failure parks instead of holding the line; the next message goes on', async () => {
    const { seen } = await load([{ name: 'client error', match: 'status', value: '4xx', kind: 'permanent' }], { mode: 'ordered', orderedPause: '0.2' });
    await broker.publish(names.mainExchange, names.routingKey, { status: 422 }, { messageId: 'first' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 2 }, { messageId: 'second' });
    await waitFor(() => seen.some((m) => m.amqp.properties.messageId === 'second'), 'the second message processed');
    assert.deepEqual(seen.map((m) => [m.amqp.properties.messageId, m.retry.attempt]), [['first', 1], ['second', 1]]);
    const parked = await broker.take(names.parkingQueue);
    assert.equal(parked.properties.headers?.['park-reason'], 'permanent (client error): HTTP 422');
    assert.equal(parked.properties.headers?.['park-error-kind'], 'permanent');
  });

  it('no rules: a 400 is retried as before, every failure transient', async () => {
    const { seen, events } = await load([]);
    await broker.publish(names.mainExchange, names.routingKey, { status: 400 }, { messageId: 'plain' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'parked out of attempts');
    // The park's event follows the copy's confirm and the original's ack: after the copy is in the queue.
    await waitFor(() => events.length === 2, 'the park reported on the events output');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2]);
    assert.deepEqual(events.map((e) => [e.event, e.kind]), [['retried', 'transient'], ['parked', 'transient']]);
    assert.equal((await broker.take(names.parkingQueue)).properties.headers?.['park-reason'], 'max attempts (2) reached; last error: HTTP 400');
  });

  it('rules that cannot be used stop the configuration: the consumer says which rule, and consumes nothing', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { errorRules: [HTTP_STARTING_RULES[0], { name: 'typo', match: 'status', value: '4x', kind: 'permanent' }] }),
      consumerNode([[]]),
    ]);
    await waitFor(() => /error rule 2 'typo' '4x' is not a status code/.test(lastStatus('consumer')?.text ?? ''), 'the consumer names the rule');
    assert.equal(lastStatus('consumer')?.fill, 'red');
    assert.equal(await broker.consumerCount(names.mainQueue), 0);
  });
});
