/**
 * The retry consumer's events output and the package's Prometheus endpoint, in the Node-RED runtime
 * against the real broker: one event per settle outcome (acked, retried, parked, replayed), a stats
 * msg with queue depths, and the same counts at GET /rabbitmq-retry/metrics.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

const decide = `
  if (msg.payload.amount > 100) { msg.error = 'amount ' + msg.payload.amount + ' is over the limit'; return [null, msg]; }
  return [msg, null];`;

async function scrape(): Promise<string> {
  const response = await helper.request().get('/rabbitmq-retry/metrics');
  assert.equal(response.status, 200);
  assert.match(response.headers['content-type'] ?? '', /^text\/plain;.*version=0\.0\.4/);
  return response.text;
}

/** The value of one sample line, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('retry consumer events output and Prometheus metrics (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('events');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  function flow(consumer: Record<string, unknown>, wires: string[][]) {
    return [
      tab(),
      brokerNode(),
      configNode(names, { maxAttempts: '2', retryDelay: '300' }),
      consumerNode(wires, consumer),
      { id: 'decide', type: 'function', z: 'flow', func: decide, outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', action: 'replay', max: '10', resetAttempts: true, wires: [[]] },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'seen', type: 'helper', z: 'flow' },
    ];
  }

  it('sends one msg per settle outcome and stats on the second output; the endpoint counts the same', async () => {
    await loadFlow(flow({ events: true, statsEvery: '0.3', parkingWatch: '0.2', outputs: 2 }, [['decide'], ['events']]));
    const events: Msg[] = [];
    helper.getNode('events').on('input', (msg: Msg) => events.push(msg));
    const outcomes = () => events.filter((m) => m.topic !== 'stats').map((m) => m.payload);
    await broker.waitForConsumer(names.mainQueue);

    await broker.publish(names.mainExchange, names.routingKey, { amount: 1 }, { messageId: 'good-1' });
    await broker.publish(names.mainExchange, names.routingKey, { amount: 500 }, { messageId: 'poison-1' });
    await waitFor(() => outcomes().length === 3, 'acked, retried and parked events');
    const [acked, retried, parked] = [...outcomes()].sort((a, b) => a.attempt - b.attempt || (a.event === 'acked' ? -1 : 1));
    assert.equal(typeof acked.durationMs, 'number');
    assert.ok(acked.durationMs >= 0);
    assert.deepEqual({ ...acked, durationMs: 0 }, { event: 'acked', attempt: 1, reason: null, queue: names.mainQueue, messageId: 'good-1', durationMs: 0, kind: null });
    assert.deepEqual({ ...retried, durationMs: 0 }, { event: 'retried', attempt: 1, reason: 'amount 500 is over the limit', queue: names.mainQueue, messageId: 'poison-1', durationMs: 0, kind: 'transient' });
    assert.deepEqual(
      { ...parked, durationMs: 0 },
      { event: 'parked', attempt: 2, reason: 'max attempts (2) reached; last error: amount 500 is over the limit', queue: names.mainQueue, messageId: 'poison-1', durationMs: 0, kind: 'transient' },
    );

    // Stats: counters, in flight and the depths of main, retry and parking queue.
    await waitFor(() => events.some((m) => m.topic === 'stats' && m.payload.parked === 1 && m.payload.depths?.parking === 1), 'a stats msg after the park');
    const stats = events.filter((m) => m.topic === 'stats').at(-1)!.payload;
    assert.deepEqual(
      { ...stats, consumeRate: 0, intervalS: 0 },
      {
        event: 'stats',
        queue: names.mainQueue,
        delivered: 3,
        acked: 1,
        retried: 1,
        parked: 1,
        duplicates: 0,
        replayed: 0,
        inFlight: 0,
        depths: { main: 0, retry: { [names.retryQueue]: 0 }, parking: 1 },
        consumeRate: 0,
        intervalS: 0,
      },
    );
    assert.equal(typeof stats.consumeRate, 'number');

    const text = await scrape();
    const consumed = (outcome: string, kind: string) => sample(text, `messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="${outcome}",kind="${kind}"}`);
    // A retry-settle in retry mode says transient (no error rules: every failure is); a plain ack says none.
    assert.deepEqual([consumed('acked', 'none'), consumed('retried', 'transient'), consumed('parked', 'transient'), consumed('parked', 'permanent'), consumed('replayed', 'none')], [1, 1, 1, 0, 0]);
    assert.equal(sample(text, `messaging_process_duration_seconds_count{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="acked"}`), 1);
    assert.equal(sample(text, `messaging_process_duration_seconds_bucket{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="parked",le="+Inf"}`), 1);
    assert.equal(sample(text, `rabbitmq_retry_parking_messages{queue="${names.mainQueue}",parking_queue="${names.parkingQueue}"}`), 1);
    assert.equal(sample(text, `rabbitmq_retry_in_flight_messages{queue="${names.mainQueue}"}`), 0);

    // A replay of the same retry configuration is an event too; the replayed message then fails again.
    helper.getNode('replay').receive({ payload: '' });
    await waitFor(() => outcomes().some((e) => e.event === 'replayed'), 'the replayed event');
    const replayed = outcomes().find((e) => e.event === 'replayed');
    assert.deepEqual(replayed, {
      event: 'replayed',
      attempt: 2,
      reason: 'max attempts (2) reached; last error: amount 500 is over the limit',
      queue: names.mainQueue,
      messageId: 'poison-1',
      durationMs: null,
    });
    await waitFor(() => outcomes().filter((e) => e.event === 'parked').length === 2, 'the replayed message parked again');
    await waitFor(async () => consumed2(await scrape()) === 1, 'the replay counted at the endpoint');
    function consumed2(t: string) {
      return sample(t, `messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="replayed",kind="none"}`);
    }
  });

  it('keeps one output and sends no events when the events output is off; the endpoint still counts', async () => {
    await loadFlow(flow({}, [['decide', 'seen']]));
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { amount: 1 });
    const acked = `messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="${names.mainQueue}",outcome="acked",kind="none"}`;
    await waitFor(async () => sample(await scrape(), acked) === 1, 'the ack counted at the endpoint');
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]!.payload, { amount: 1 });
  });
});
