/**
 * Deliveries without a broker, through their narrow parts: an ack channel that writes down what it is
 * told, a copy publisher that confirms or refuses. The settle deadline (one timer for the oldest), acks
 * at once, double settles, a confirmed copy before the ack, a failed copy handled in one place.
 */
import assert from 'node:assert/strict';
import type { ConsumeMessage, Options } from 'amqplib';
import { Deliveries } from '../../src/lib/consume/deliveries';
import { DeliveryRegistry } from '../../src/lib/consume/registry';
import type { Settled } from '../../src/lib/consume/types';
import type { DeliveredMessage } from '../../src/lib/message';
import { AckBatcher, decisionPolicy, OrderedHold, Settler, SettleError, type CopyPublisher, type TrackedDelivery } from '../../src/lib/settle';
import type { RetryTopologyConfig } from '../../src/lib/topology';

const topology: RetryTopologyConfig = {
  mode: 'declare',
  mainExchange: '',
  mainExchangeType: 'direct',
  mainQueue: 'q',
  routingKeys: [],
  retryExchange: '',
  retryExchangeType: 'fanout',
  retryQueue: 'q.retry',
  retryDelaysMs: [1000],
  parkingQueue: 'q.parking',
  maxAttempts: 3,
  maxAgeMs: 0,
  mainQueueArguments: {},
  retryQueueArguments: {},
  parkingQueueArguments: {},
};

function message(tag: number): ConsumeMessage {
  return {
    content: Buffer.from(`{"n":${tag}}`),
    fields: { deliveryTag: tag, redelivered: false, exchange: '', routingKey: 'q', consumerTag: 'ctag' },
    properties: { contentType: 'application/json', headers: {} },
  } as unknown as ConsumeMessage;
}

const attempt1 = { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] };
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A copy publisher that records what it publishes, and confirms or refuses as told. */
class FakeCopies implements CopyPublisher {
  readonly published: Array<{ queue: string; headers: Record<string, unknown> }> = [];
  refuse: string | undefined;
  publish(_exchange: string, routingKey: string, _content: Buffer, options: Options.Publish): Promise<void> {
    if (this.refuse !== undefined) return Promise.reject(new Error(this.refuse));
    this.published.push({ queue: routingKey, headers: (options.headers ?? {}) as Record<string, unknown> });
    return Promise.resolve();
  }
}

function setup(settleTimeoutMs: number, options: { ordered?: boolean; requeuePauseMs?: number } = {}) {
  const written: string[] = [];
  const channel = {
    ack: (m: ConsumeMessage, all?: boolean) => written.push(`ack ${m.fields.deliveryTag}${all ? '+' : ''}`),
    nack: (m: ConsumeMessage, all?: boolean, requeue?: boolean) => written.push(`nack ${m.fields.deliveryTag}${all ? '+' : ''}${requeue ? ' requeue' : ''}`),
  };
  const acks = new AckBatcher(channel);
  const copies = new FakeCopies();
  const hold = options.ordered ? new OrderedHold(10) : undefined;
  const deliveries = new Deliveries(new DeliveryRegistry<TrackedDelivery>('node1', 4), {
    configId: 'cfg',
    mainQueue: 'q',
    policy: decisionPolicy(topology, options.ordered === true),
    settler: new Settler(copies),
    hold,
    settleTimeoutMs,
    decode: 'auto',
    invalidBody: 'park',
    requeuePauseMs: options.requeuePauseMs ?? 1000,
  });
  const delivered: DeliveredMessage[] = [];
  const warnings: string[] = [];
  deliveries.on('message', (d) => delivered.push(d));
  deliveries.on('warning', (w) => warnings.push(w));
  const track = (tag: number, retry = attempt1): string => {
    deliveries.arrived(acks, message(tag), retry, Date.now());
    return delivered.at(-1)!.amqp.deliveryId;
  };
  return { written, deliveries, delivered, warnings, track, acks, copies, hold };
}

describe('deliveries', () => {
  it('an ack settles at once: the outcome is there before any other turn, the ack written at the end of it', async () => {
    const { written, deliveries, track } = setup(0);
    const a = track(1);
    track(2);
    let outcome: unknown;
    void deliveries.settle(a, 'ack').then((o) => (outcome = o));
    await Promise.resolve();
    assert.deepEqual(outcome, { done: 'acked', attempt: 1 });
    assert.equal(deliveries.inFlight, 1);
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
  });

  it('a second settle is told how the first ended; an id it never gave out is unknown', async () => {
    const { deliveries, track } = setup(0);
    const a = track(1);
    await deliveries.settle(a, 'retry');
    await assert.rejects(deliveries.settle(a, 'ack'), (err: SettleError) => err.kind === 'already-settled' && /already settled \(retried\)/.test(err.message));
    await assert.rejects(deliveries.settle('node1:99', 'ack'), (err: SettleError) => err.kind === 'unknown');
    await assert.rejects(deliveries.settle('other:1', 'ack'), (err: SettleError) => err.kind === 'unknown');
  });

  it('settleNow (the settle nodes\' path): an ack or a dead-letter returns its outcome itself, a copy a promise; one that cannot settle throws', async () => {
    const { written, deliveries, track, copies } = setup(0);
    const a = track(1);
    const b = track(2);
    const c = track(3);
    assert.deepEqual(deliveries.settleNow(a, 'ack'), { done: 'acked', attempt: 1 });
    assert.deepEqual(deliveries.settleNow(b, 'retry'), { done: 'retried', attempt: 1 }); // a dead-letter retry: no copy
    const parked = deliveries.settleNow(c, 'park', 'bad');
    assert.ok(parked instanceof Promise, 'a park waits for its confirmed copy');
    assert.equal((await parked).done, 'parked');
    assert.deepEqual(copies.published.map((p) => p.queue), ['q.parking']);
    assert.throws(() => deliveries.settleNow(a, 'ack'), (err: SettleError) => err.kind === 'already-settled');
    assert.throws(() => deliveries.settleNow('node1:99', 'retry'), (err: SettleError) => err.kind === 'unknown');
    await nextTurn();
    assert.deepEqual(written, ['ack 1+', 'nack 2+', 'ack 3+']);
  });

  it('settle timeout: each unsettled delivery is retried once its own time is up, oldest first; settled ones are left alone', async () => {
    const { written, deliveries, warnings, track } = setup(40);
    const a = track(1);
    await sleep(20);
    track(2);
    track(3);
    await deliveries.settle(a, 'ack');
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
    // 1 was acked; 2 and 3 are due about 40 ms after they arrived, both in one expiry.
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    assert.equal(deliveries.inFlight, 0);
    // Both due in one expiry: one multiple-nack (dead-letter) for the two.
    assert.deepEqual(written, ['ack 1+', 'nack 3+']);
    assert.equal(warnings.filter((w) => /not settled within 0.04 s: sent to retry/.test(w)).length, 2);
  });

  it('settle timeout: a delivery that arrives after the timer went quiet arms it again', async () => {
    const { written, deliveries, track } = setup(20);
    track(1);
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    track(2);
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    assert.deepEqual(written, ['nack 1+', 'nack 2+']);
  });

  it('the kind travels with the settle: onto the settled event and the park header; the settle timeout is transient, a plain ack has none', async () => {
    const { deliveries, track, copies } = setup(30);
    const settled: Settled[] = [];
    deliveries.on('settled', (e) => settled.push(e));
    const permanent = track(1);
    const done = track(2);
    const plain = track(3);
    assert.equal((await deliveries.settle(permanent, 'retry', 'permanent (client error): HTTP 400', undefined, 'permanent')).done, 'parked');
    assert.deepEqual(deliveries.settleNow(done, 'ack', '', undefined, 'done'), { done: 'acked', attempt: 1 });
    deliveries.settleNow(plain, 'ack');
    track(4); // left to the settle timeout
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    assert.deepEqual(
      settled.map((e) => [e.outcome.done, e.kind]),
      [
        ['parked', 'permanent'],
        ['acked', 'done'],
        ['acked', undefined],
        ['retried', 'transient'],
      ],
    );
    assert.deepEqual(copies.published.map((p) => [p.headers['park-reason'], p.headers['park-error-kind'], p.headers['retry-attempt']]), [['permanent (client error): HTTP 400', 'permanent', 1]]);
  });

  it('a park is a confirmed copy first, the ack only after it, counted once', async () => {
    const { written, deliveries, track, copies } = setup(0);
    const a = track(1);
    track(2);
    const outcome = await deliveries.settle(a, 'park', 'bad amount');
    assert.deepEqual(copies.published.map((p) => [p.queue, p.headers['park-reason']]), [['q.parking', 'bad amount']]);
    assert.equal(outcome.done, 'parked');
    assert.equal(deliveries.counters.parked, 1);
    assert.equal(deliveries.copying, 0);
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
  });

  it('a failed copy is handled in one place: not acked, the settle told why, a later settle told it is stale, the message back to the queue after the pause', async () => {
    const { written, deliveries, track, copies } = setup(0, { requeuePauseMs: 20 });
    const a = track(1);
    copies.refuse = 'exchange gone';
    const changes: number[] = [];
    deliveries.on('changed', () => changes.push(deliveries.copying));
    await assert.rejects(deliveries.settle(a, 'park'), (err: SettleError) => err.kind === 'broker' && /could not park message .* in 'q.parking': exchange gone; it goes back to 'q' after a pause/.test(err.message));
    assert.equal(deliveries.counters.parked, 0);
    assert.equal(deliveries.copying, 0);
    assert.deepEqual(changes, [0], 'a waiting drain is told once the copy is no longer in flight');
    await assert.rejects(deliveries.settle(a, 'ack'), (err: SettleError) => err.kind === 'stale' && /parking failed/.test(err.message));
    assert.deepEqual(written, []);
    for (let i = 0; i < 100 && written.length === 0; i += 1) await sleep(5);
    assert.deepEqual(written, ['nack 1 requeue']);
  });

  it('a copy whose channel went away before the confirm is stale and not requeued (the broker has it)', async () => {
    const { written, deliveries, track, acks } = setup(0, { requeuePauseMs: 5 });
    const a = track(1);
    const settling = deliveries.settle(a, 'park');
    acks.close();
    await assert.rejects(settling, (err: SettleError) => err.kind === 'stale' && /copied to 'q.parking', but its channel was lost before the ack/.test(err.message));
    await sleep(20);
    assert.deepEqual(written, []);
  });

  it('an ack on a channel that is gone is stale, and says which attempt will be repeated', async () => {
    const { deliveries, track, acks } = setup(0);
    const a = track(1);
    acks.close();
    await assert.rejects(deliveries.settle(a, 'ack'), (err: SettleError) => err.kind === 'stale' && /attempt 1 will be repeated/.test(err.message));
  });

  it('a body that does not decode is parked on arrival with the reason, never passed on', async () => {
    const { deliveries, delivered, copies } = setup(0);
    const bad = { ...message(1), content: Buffer.from('{not json') } as ConsumeMessage;
    const acks = new AckBatcher({ ack: () => undefined, nack: () => undefined });
    deliveries.arrived(acks, bad, attempt1, Date.now());
    for (let i = 0; i < 50 && copies.published.length === 0; i += 1) await nextTurn();
    assert.equal(delivered.length, 0);
    assert.match(String(copies.published[0]?.headers['park-reason']), /body is not valid JSON/);
  });

  it('ordered: a retry holds the message and runs it through the flow again as the next attempt, until it is acked', async () => {
    const { deliveries, delivered, track, hold, written } = setup(0, { ordered: true });
    const blocked: string[] = [];
    hold?.on('blocked', (why) => blocked.push(why));
    hold?.on('released', () => blocked.push('released'));
    const first = track(1);
    await deliveries.settle(first, 'retry', 'not yet');
    assert.match(blocked[0] ?? '', /^blocked since .*, attempt 1: not yet$/);
    for (let i = 0; i < 100 && delivered.length < 2; i += 1) await sleep(5);
    assert.equal(delivered[1]?.retry.attempt, 2);
    await deliveries.settle(delivered[1].amqp.deliveryId, 'ack');
    assert.equal(blocked.at(-1), 'released');
    await nextTurn();
    assert.deepEqual(written, ['ack 1+'], 'the one held delivery, acked once');
  });

  it('ordered: a stopping consumer does not run a held message again', async () => {
    const { deliveries, delivered, track } = setup(0, { ordered: true });
    await deliveries.settle(track(1), 'retry');
    deliveries.stop();
    await sleep(40);
    assert.equal(delivered.length, 1);
  });
});
