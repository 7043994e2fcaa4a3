/**
 * Retry timing on every broker version (the suite runs against each): a 429 with `Retry-After: 3`
 * (and one with an HTTP date) is retried no sooner than 3 s later, in the first tier at least that
 * long; `msg.retry.delay` set by the flow does the same; jitter spreads one tier over its sub-tier
 * queues, never sooner than the tier. Lower bounds only: how much later is the bench's business.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';
import { HTTP_STARTING_RULES } from '../../src/lib/classify/rules';
import { jitteredDelays } from '../../src/lib/topology/retry-queues';

type Msg = Record<string, any>;

describe('retry timing: Retry-After, msg.retry.delay and jitter (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('timing');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → work(code) → [ack, retry]; returns each msg work saw and when. */
  async function load(code: string, config: Record<string, unknown>): Promise<Array<{ msg: Msg; at: number }>> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', ...config }),
      consumerNode([['work']], { prefetch: '50' }),
      { id: 'work', type: 'function', z: 'flow', func: `node.send([null, null, msg]); ${code}`, outputs: 3, wires: [['ack'], ['retry'], ['seen']] },
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ]);
    const seen: Array<{ msg: Msg; at: number }> = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push({ msg: m, at: Date.now() }));
    await broker.waitForConsumer(names.mainQueue);
    return seen;
  }

  const tiers = (...ms: number[]) => ms.map((d) => `${names.retryQueue}.${d >= 1000 && d % 1000 === 0 ? `${d / 1000}s` : `${d}ms`}`);

  /** The second attempt of each message came no sooner than `atLeastMs` after its first. */
  function assertWaited(seen: Array<{ msg: Msg; at: number }>, id: string, atLeastMs: number): void {
    const times = seen.filter((s) => s.msg.amqp.properties.messageId === id).map((s) => s.at);
    assert.equal(times.length, 2, `${id}: two attempts`);
    const waited = (times[1] ?? 0) - (times[0] ?? 0);
    assert.ok(waited >= atLeastMs - 15, `${id} waited ${waited} ms, asked ${atLeastMs} ms`);
  }

  it('a 429 with Retry-After: 3 (seconds) is retried no sooner than 3 s later, from the first tier at least that long; an HTTP date too', async () => {
    broker.track('queue', ...tiers(500, 4000));
    const code = `
      if (msg.retry.attempt === 1) {
        msg.statusCode = 429; msg.error = 'HTTP 429';
        msg.headers = { 'retry-after': msg.payload.date ? new Date(Date.now() + 3000).toUTCString() : '3' };
        return [null, msg];
      }
      return [msg, null];`;
    const seen = await load(code, { retryDelay: '500ms, 4s', maxAttempts: '3', errorRules: HTTP_STARTING_RULES });
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'seconds' });
    await broker.publish(names.mainExchange, names.routingKey, { date: true }, { messageId: 'date' });
    await waitFor(() => seen.length === 4, 'both retried once and done', 20_000);
    assertWaited(seen, 'seconds', 3000);
    // An HTTP date has whole seconds: up to 1 s of it is gone by the time it is read.
    assertWaited(seen, 'date', 2000);
    const waitedIn = (id: string) => seen.filter((s) => s.msg.amqp.properties.messageId === id)[1]?.msg.retry.deaths.filter((d: Msg) => d.reason === 'expired').map((d: Msg) => d.queue);
    assert.deepEqual(waitedIn('seconds'), [tiers(4000)[0]], 'the 4 s tier, not the first (500 ms) one');
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });

  it('msg.retry.delay set by the flow: the retry waits in the first tier at least that long', async () => {
    broker.track('queue', ...tiers(300, 2000));
    const code = `
      if (msg.retry.attempt === 1) { msg.error = 'later please'; msg.retry.delay = 1500; return [null, msg]; }
      return [msg, null];`;
    const seen = await load(code, { retryDelay: '300ms, 2s', maxAttempts: '3' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { messageId: 'asked' });
    await waitFor(() => seen.length === 2, 'retried once and done', 20_000);
    assertWaited(seen, 'asked', 1500);
  });

  it('jitter: one tier spread over its sub-tier queues, none sooner than the tier', async () => {
    const subTiers = jitteredDelays(1000, 50).map((d) => `${names.retryQueue}.${d === 1000 ? '1s' : `${d}ms`}`);
    broker.track('queue', ...subTiers);
    const code = `
      if (msg.retry.attempt === 1) { msg.error = 'outage'; return [null, msg]; }
      return [msg, null];`;
    const seen = await load(code, { retryDelay: '1s', retryJitter: '50', maxAttempts: '3' });
    for (const queue of subTiers) assert.ok(await broker.exists('queue', queue), `${queue} declared`);
    const ids = Array.from({ length: 24 }, (_, i) => `j${i}`);
    for (const id of ids) await broker.publish(names.mainExchange, names.routingKey, { id }, { messageId: id });
    await waitFor(() => seen.length === ids.length * 2, 'every message retried once and done', 30_000);
    for (const id of ids) assertWaited(seen, id, 1000);
    const waitedIn = new Set(seen.filter((s) => s.msg.retry.attempt === 2).flatMap((s) => s.msg.retry.deaths.filter((d: Msg) => d.reason === 'expired').map((d: Msg) => d.queue)));
    assert.ok(waitedIn.size > 1, `the retries came back through several sub-tiers: ${[...waitedIn].join(', ')}`);
    for (const queue of waitedIn) assert.ok(subTiers.includes(queue), queue);
  });
});
