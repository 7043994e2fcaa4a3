/**
 * Settles (step 6 of the walk) without a broker: the deliveries that own them with an ack channel that
 * writes down what it is told and a copy publisher that confirms or refuses. What a settle by id
 * becomes (decide()), when its outcome is known, what it reports, and a copy that fails.
 */
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import { Deliveries } from '../../../src/lib/consume/deliveries';
import { DeliveryRegistry } from '../../../src/lib/consume/registry';
import type { Settled } from '../../../src/lib/consume/types';
import type { DeliveredMessage } from '../../../src/lib/message';
import { AckBatcher, decisionPolicy, Settler, SettleError, type SettleOutcome, type TrackedDelivery } from '../../../src/lib/settle';
import { FakeCopies, recordingChannel } from '../fixtures/settle-fakes';
import { consumerTopology } from '../fixtures/topology-seed';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function message(tag: number): ConsumeMessage {
  return {
    content: Buffer.from(`{"n":${tag}}`),
    fields: { deliveryTag: tag, redelivered: false, exchange: '', routingKey: 'q', consumerTag: 'ctag' },
    properties: { contentType: 'application/json', headers: {} },
  } as unknown as ConsumeMessage;
}

const retryAt = (attempt: number) => ({ attempt, maxAttempts: 3, remaining: 3 - attempt, firstDeathReason: null, deaths: [] });

function setup() {
  const written: string[] = [];
  const channel = recordingChannel(written);
  const acks = new AckBatcher(channel);
  const copies = new FakeCopies();
  const deliveries = new Deliveries(new DeliveryRegistry<TrackedDelivery>('node1', 4), {
    configId: 'cfg',
    mainQueue: consumerTopology.mainQueue,
    policy: decisionPolicy(consumerTopology, false),
    settler: new Settler(copies),
    settleTimeoutMs: 0,
    decode: 'auto',
    invalidBody: 'park',
    requeuePauseMs: 60_000,
  });
  const delivered: DeliveredMessage[] = [];
  const settled: Settled[] = [];
  deliveries.on('message', (d) => delivered.push(d));
  deliveries.on('settled', (s) => settled.push(s));
  const track = (tag: number, attempt = 1): string => {
    deliveries.arrived(acks, message(tag), retryAt(attempt), Date.now());
    return delivered.at(-1)!.amqp.deliveryId;
  };
  const later: Array<SettleOutcome | Error> = [];
  const settles = deliveries.settles;
  return { written, copies, deliveries, settles, settled, track, later, laterFn: (result: SettleOutcome | Error) => later.push(result) };
}

describe('settles', () => {
  it('an ack: its outcome returned at once, counted and reported, the ack written at the end of the turn', async () => {
    const { written, settles, settled, track, laterFn, later } = setup();
    const id = track(1);
    assert.equal(settles.issued(id), true);
    assert.deepEqual(settles.settleNow(id, 'ack', '', undefined, undefined, laterFn), { done: 'acked', attempt: 1 });
    assert.equal(settles.counters.acked, 1);
    assert.equal(settled.length, 1);
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
    assert.deepEqual(later, [], 'nothing comes later for an ack');
  });

  it('a transient failure before the last attempt is dead-lettered to the retry queue (a nack, no copy)', async () => {
    const { written, copies, settles, track, laterFn } = setup();
    const id = track(1);
    const outcome = settles.settleNow(id, 'retry', 'boom', undefined, 'transient', laterFn);
    assert.equal(outcome?.done, 'retried');
    await nextTurn();
    assert.equal(written.length, 1);
    assert.match(written[0]!, /^(nack 1\+|reject 1)$/, 'a dead-letter frame, not requeued (a reject per message from this fixture\'s queue type)');
    assert.deepEqual(copies.published, []);
    assert.equal(settles.counters.retried, 1);
  });

  it('a retry at the last attempt parks: a confirmed copy to the parking queue, then the ack; the outcome comes later', async () => {
    const { written, copies, settles, track, later, laterFn } = setup();
    const id = track(1, 3);
    assert.equal(settles.settleNow(id, 'retry', 'still failing', undefined, 'transient', laterFn), undefined);
    for (let i = 0; i < 5 && later.length === 0; i += 1) await nextTurn();
    assert.equal((later[0] as SettleOutcome).done, 'parked');
    assert.deepEqual(copies.published.map((c) => c.queue), [consumerTopology.parkingQueue]);
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
    assert.equal(settles.counters.parked, 1);
  });

  it('a permanent failure parks at once, whatever the attempt', async () => {
    const { copies, settles, track, later, laterFn } = setup();
    const id = track(1, 1);
    settles.settleNow(id, 'retry', 'bad input', undefined, 'permanent', laterFn);
    for (let i = 0; i < 5 && later.length === 0; i += 1) await nextTurn();
    assert.equal((later[0] as SettleOutcome).done, 'parked');
    assert.deepEqual(copies.published.map((c) => c.queue), [consumerTopology.parkingQueue]);
  });

  it('a copy that fails is an error for the end node; the delivery is not acked', async () => {
    const { written, copies, deliveries, settles, track, later, laterFn } = setup();
    copies.refuse = 'channel closed';
    const id = track(1, 3);
    settles.settleNow(id, 'retry', 'x', undefined, 'transient', laterFn);
    for (let i = 0; i < 5 && later.length === 0; i += 1) await nextTurn();
    assert.ok(later[0] instanceof Error);
    await nextTurn();
    assert.deepEqual(written, [], 'neither acked nor dead-lettered: it goes back to the queue after a pause');
    deliveries.endAll('test over');
  });

  it('a second settle, or an id never given out, throws a settle error of its kind', () => {
    const { settles, track, laterFn } = setup();
    const id = track(1);
    settles.settleNow(id, 'ack', '', undefined, undefined, laterFn);
    assert.throws(() => settles.settleNow(id, 'ack', '', undefined, undefined, laterFn), (err: SettleError) => err.kind === 'already-settled');
    assert.equal(settles.issued('other:1'), false);
    assert.throws(() => settles.settleNow('node1:99', 'ack', '', undefined, undefined, laterFn), (err: SettleError) => err.kind === 'unknown');
  });
});
