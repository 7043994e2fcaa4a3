/**
 * Batch mode (issue 51) and what the consumer already observes, per ITEM: a batch settled with mixed
 * outcomes (ack, retry, park) is counted item by item in the events output, the Prometheus counters
 * and the 24 h history; the kill switch counts the items' failures (one batch where most items fail
 * trips it, as that many single messages would).
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

/** The sum of one sample's lines (every label set starting with `prefix`). */
function total(text: string, prefix: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('batch mode: events, metrics, history and the kill switch count items (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('batchobs');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** A consumer in batch mode (batches of `size`) with its events output; `decide` sets msg.outcomes / msg.errors on each batch msg, then `settle`. */
  async function load(size: number, decide: string, settle: Msg, consumer: Msg = {}): Promise<Msg[]> {
    await loadFlow([
      tab(),
      brokerNode(),
      // Retries wait in the retry queue for the whole test.
      configNode(names, { maxAttempts: '3', retryDelay: '600000' }),
      consumerNode([['decide'], ['events']], { batch: true, batchSize: String(size), batchWait: '60000', events: true, statsEvery: '0', outputs: 2, ...consumer }),
      { id: 'decide', type: 'function', z: 'flow', func: `${decide}\nreturn msg;`, outputs: 1, wires: [['settle']] },
      { id: 'settle', type: 'retry-settle', z: 'flow', wires: [], ...settle },
      { id: 'events', type: 'helper', z: 'flow' },
    ]);
    const events: Msg[] = [];
    helper.getNode('events').on('input', (msg: Msg) => events.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    return events;
  }

  async function publish(count: number): Promise<void> {
    for (let n = 0; n < count; n += 1) await broker.publish(names.mainExchange, names.routingKey, { n }, { messageId: `m-${n}` });
  }

  it('a batch settled with mixed outcomes: one event, one count and one history slot entry per item', async () => {
    const events = await load(6, "msg.outcomes = { 1: 'retry', 2: 'park', 3: { action: 'park', reason: 'bad row' } };", { action: 'ack' });
    await publish(6);
    const outcomes = (): Msg[] => events.filter((m) => m.topic !== 'stats' && m.topic !== 'circuit').map((m) => m.payload);
    await waitFor(() => outcomes().length === 6, 'six settle events');
    const by = (event: string): string[] => outcomes().filter((e) => e.event === event).map((e) => e.messageId).sort();
    assert.deepEqual([by('acked'), by('retried'), by('parked')], [['m-0', 'm-4', 'm-5'], ['m-1'], ['m-2', 'm-3']]);
    assert.equal(outcomes().find((e) => e.messageId === 'm-3')?.reason, 'bad row');

    const text = (await helper.request().get('/rabbitmq-retry/metrics')).text;
    const consumed = (outcome: string): number => total(text, `messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="${outcome}"`);
    assert.deepEqual([consumed('acked'), consumed('retried'), consumed('parked')], [3, 1, 2]);
    assert.equal(total(text, `messaging_process_duration_seconds_count{messaging_system="rabbitmq",queue="${names.mainQueue}"`), 6);

    const history = (await helper.request().get('/rabbitmq-retry/history?consumer=consumer&minutes=5')).body as { consumers: Array<Record<string, number[]>> };
    const sum = (series: string): number => (history.consumers[0]?.[series] ?? []).reduce((a, b) => a + b, 0);
    assert.deepEqual([sum('acked'), sum('retried'), sum('parked')], [3, 1, 2]);
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 2, 'two items parked');
  });

  it('the kill switch counts the items\' failures: one batch where most items fail trips it', async () => {
    const circuit = { circuit: true, circuitActivation: '5', circuitTripPercent: '50', circuitWindow: '60', circuitRestart: '60', circuitRestartMax: '60', circuitProbes: '1' };
    // Items 0 to 7 fail (no error rules: retried, a transient failure), 8 and 9 are acked.
    const events = await load(10, "msg.errors = msg.payload.map((p) => (p.n < 8 ? 'database timeout' : null));", { action: 'ack' }, circuit);
    await publish(10);
    await waitFor(() => events.some((m) => m.topic === 'circuit'), 'the kill switch to trip');
    const tripped = events.find((m) => m.topic === 'circuit')?.payload as Msg;
    assert.equal(tripped.state, 'open');
    assert.ok(tripped.settles >= 5 && tripped.failures >= 5, `counted per item: ${JSON.stringify(tripped)}`);
    assert.equal(sessionOf().circuit?.state, 'open');
  });
});
