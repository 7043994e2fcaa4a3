/**
 * Issue 26: the kill switch and the rate limit of a retry consumer, in the Node-RED runtime against the
 * real broker. A downstream the test switches off and on: while "down" every message is retried, while
 * "up" acked. State changes are awaited (events, the broker's consumers), never timed.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Broker, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, sessionOf, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow, statusTexts } from '../helpers/node-red';

type Msg = Record<string, any>;

/** The prefetch of each consumer of a queue, as the broker's management API lists them. */
async function consumerPrefetches(queue: string): Promise<number[]> {
  const response = await management('GET', `consumers/${vhostPath()}`);
  const consumers = (await response.json()) as Array<{ queue: { name: string }; prefetch_count: number }>;
  return consumers.filter((c) => c.queue.name === queue).map((c) => c.prefetch_count);
}

describe('downstream protection: kill switch and rate limit (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('protect');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  it('trips after the activation threshold, stops consuming, probes with prefetch 1 (a failed probe opens it for twice as long), closes after the probes succeed; resume closes it by hand', async () => {
    const circuit = { circuit: true, circuitActivation: '5', circuitTripPercent: '50', circuitWindow: '60', circuitRestart: '1', circuitRestartMax: '2', circuitProbes: '2' };
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { maxAttempts: '20' }),
      consumerNode([['seen'], ['events']], { ...circuit, events: true, statsEvery: '0', outputs: 2 }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'events', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    let down = true;
    let delivered = 0;
    helper.getNode('seen').on('input', (msg: Msg) => {
      delivered += 1;
      if (down) helper.getNode('retry').receive({ ...msg, error: { message: 'database unavailable' } });
      else helper.getNode('ack').receive(msg);
    });
    const changes: Msg[] = [];
    helper.getNode('events').on('input', (msg: Msg) => {
      if (msg.topic === 'circuit') changes.push(msg.payload as Msg);
    });
    await broker.waitForConsumer(names.mainQueue);
    // Deliveries handed to the flow when each change happened (both counted in the session, at once).
    let handed = 0;
    const handedAt: number[] = [];
    sessionOf().deliveries.on('message', () => (handed += 1));
    sessionOf().on('circuit', () => handedAt.push(handed));
    await waitFor(async () => JSON.stringify(await consumerPrefetches(names.mainQueue)) === '[10]', 'the management API to list the consumer with its prefetch');

    for (let n = 1; n <= 30; n++) await broker.publish(names.mainExchange, names.routingKey, { n });
    await waitFor(() => changes.length >= 1, 'the kill switch to trip');
    assert.deepEqual(
      { ...changes[0], reason: undefined },
      { event: 'circuit', queue: names.mainQueue, state: 'open', previous: 'closed', reason: undefined, failures: 5, settles: 5, restartInS: 1 },
    );
    assert.match(String(changes[0]!.reason), /^5 of 5 settles failed \(100 %\) in the last 60 s$/);

    // The consumer no longer consumes: the messages wait in the queue (attempts untouched) instead of burning them.
    await waitFor(async () => (await broker.consumerCount(names.mainQueue)) === 0 || changes.length > 1, 'the consumer cancelled');
    const statuses = statusTexts('consumer');
    assert.ok(statuses.some((t) => /^circuit open · probe in \d+ s$/.test(t)), statuses.join('\n'));

    // Still down: the first probe fails and opens it again, for twice as long (capped at 2 s).
    await waitFor(() => changes.length >= 3, 'a probe and a failed probe');
    assert.deepEqual(changes.slice(1, 3).map((c) => [c.previous, c.state, c.reason, c.restartInS]), [
      ['open', 'probing', 'restart timeout passed', undefined],
      ['probing', 'open', 'probe failed', 2],
    ]);
    assert.equal(handedAt[2]! - handedAt[1]!, 1, 'probing takes one message at a time: the first failed');
    await waitFor(async () => (await broker.consumerCount(names.mainQueue)) === 0, 'the probing consumer cancelled');
    assert.ok((await broker.messageCount(names.mainQueue)) >= 20, 'the messages wait in the queue');
    const parkedWhileDown = sessionOf().stats.parked;
    assert.equal(parkedWhileDown, 0, 'nothing parked');

    // The downstream answers: the next probe takes one message at a time, two successes close it, then the full prefetch.
    down = false;
    await waitFor(() => changes.length >= 4, 'probing again');
    assert.equal(changes[3]!.state, 'probing');
    await waitFor(() => changes.length >= 5, 'closed after the probes');
    assert.deepEqual([changes[4]!.previous, changes[4]!.state, changes[4]!.reason], ['probing', 'closed', '2 probes succeeded']);
    assert.equal(handedAt[4]! - handedAt[3]!, 2, 'one at a time: two probes, two messages');
    await waitFor(async () => JSON.stringify(await consumerPrefetches(names.mainQueue)) === '[10]', 'the full prefetch again');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && sessionOf().stats.inFlight === 0 && sessionOf().stats.acked === 30, 'every message acked');
    assert.equal(sessionOf().stats.parked, 0);
    assert.ok(/✓30 /.test(lastStatus('consumer')?.text ?? ''), lastStatus('consumer')?.text);

    // Down again: it trips with the first restart timeout (closing started the doubling anew); resume closes it by hand.
    down = true;
    for (let n = 31; n <= 40; n++) await broker.publish(names.mainExchange, names.routingKey, { n });
    await waitFor(() => changes.length >= 6, 'the second trip');
    assert.deepEqual([changes[5]!.state, changes[5]!.restartInS], ['open', 1]);
    down = false;
    helper.getNode('consumer').receive({ topic: 'resume' });
    await waitFor(() => changes.some((c, i) => i >= 6 && c.reason === 'resumed by hand'), 'closed by hand');
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && sessionOf().stats.acked === 40 && sessionOf().stats.inFlight === 0, 'every message acked');
    assert.ok(delivered >= 40);
  });

  it('parks (park-publisher) do not trip it', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['park']], { circuit: true, circuitActivation: '3', circuitTripPercent: '1' }),
      { id: 'park', type: 'park-publisher', z: 'flow', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    for (let n = 1; n <= 10; n++) await broker.publish(names.mainExchange, names.routingKey, { n });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 10, 'every message parked');
    assert.equal(sessionOf().circuit?.state, 'closed');
    assert.equal(await broker.consumerCount(names.mainQueue), 1);
  });

  it('rate limit: deliveries handed to the flow never exceed the bucket, the rest wait unacked under the prefetch; the status says it holds messages back', async () => {
    const rate = 20;
    const prefetch = 10;
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['ack']], { rateLimit: String(rate), prefetch: String(prefetch) }),
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    const session = sessionOf();
    const handed: number[] = [];
    let mostHeld = 0;
    session.deliveries.on('message', () => {
      handed.push(performance.now());
      mostHeld = Math.max(mostHeld, session.stats.rateLimited ?? 0);
    });
    const total = 40;
    for (let n = 1; n <= total; n++) await broker.publish(names.mainExchange, names.routingKey, { n });
    await waitFor(() => session.stats.acked === total, 'every message acked');

    // Over any stretch from one hand-over to a later one: at most rate × elapsed plus the burst (a tenth of a second, at least 1),
    // and one more: the test stamps a hand-over after the bucket gave its token (the body decoded between, a GC pause), so a
    // stretch it sees can be a little shorter than the bucket's (seen on 4.3.6: 12 in 499.5 ms, the bucket's 12 in 500 ms).
    // Without the limit all 40 arrive within milliseconds; at twice the rate, 40 within a second: both still fail.
    const burst = Math.max(1, rate / 10);
    const over: string[] = [];
    for (let i = 0; i < handed.length; i++) {
      for (let j = i; j < handed.length; j++) {
        const allowed = burst + 1 + (rate * (handed[j]! - handed[i]!)) / 1000;
        if (j - i + 1 > allowed) over.push(`${j - i + 1} in ${(handed[j]! - handed[i]!).toFixed(1)} ms`);
      }
    }
    assert.deepEqual(over, []);
    assert.equal(handed.length, total);
    assert.ok(mostHeld > 0 && mostHeld <= prefetch, `held at most the prefetch (${mostHeld})`);
    assert.ok(statusTexts('consumer').some((t) => t.startsWith(`rate-limited · ${rate}/s · `)), statusTexts('consumer').join('\n'));
    await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the queue empty');
  });

  it('a value that cannot be used stops the node with a status naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ circuitTripPercent: '0' }, /trip threshold is '0': must be a number from 1 to 100 %/],
      [{ circuitTripPercent: '101' }, /trip threshold is '101'/],
      [{ circuitActivation: '0' }, /activation threshold is '0': must be a whole number of at least 1/],
      [{ circuitProbes: '1.5' }, /probes is '1.5'/],
      [{ circuitWindow: '-1' }, /window is '-1'/],
      [{ rateLimit: '-1' }, /rate limit is '-1': must be a number from 0 to 1000000 messages\/s/],
      [{ circuitRestart: '60', circuitRestartMax: '30' }, /longest restart timeout is 30: must be at least the restart timeout \(60 s\)/],
    ];
    for (const [extra, expected] of cases) {
      await loadFlow([tab(), brokerNode(), configNode(names), consumerNode([[]], { circuit: true, ...extra })]);
      const status = lastStatus('consumer');
      assert.equal(status?.fill, 'red', JSON.stringify(extra));
      assert.match(status?.text ?? '', expected);
      await helper.unload();
    }
  });
});
