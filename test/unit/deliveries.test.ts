/** Deliveries without a broker: the settle deadline (one timer for the oldest), acks at once, double settles. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ConsumeMessage } from 'amqplib';
import { AckBatcher } from '../../src/lib/settle/ack-batcher';
import type { BrokerConnection } from '../../src/lib/connection/broker-connection';
import { decisionPolicy } from '../../src/lib/settle/decide';
import { Deliveries } from '../../src/lib/consume/deliveries';
import { DeliveryRegistry } from '../../src/lib/consume/registry';
import type { DeliveredMessage } from '../../src/lib/message/message-info';
import type { ConsumerSessionEvents } from '../../src/lib/consume/types';
import { SettleError, type TrackedDelivery } from '../../src/lib/settle/settlement';
import { Settler } from '../../src/lib/settle/settler';
import type { RetryTopologyConfig } from '../../src/lib/topology/plan';

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

function setup(settleTimeoutMs: number) {
  const written: string[] = [];
  const channel = {
    ack: (m: ConsumeMessage, all?: boolean) => written.push(`ack ${m.fields.deliveryTag}${all ? '+' : ''}`),
    nack: (m: ConsumeMessage, all?: boolean, requeue?: boolean) => written.push(`nack ${m.fields.deliveryTag}${all ? '+' : ''}${requeue ? ' requeue' : ''}`),
  };
  const acks = new AckBatcher(channel);
  const events = new EventEmitter<ConsumerSessionEvents>();
  const delivered: DeliveredMessage[] = [];
  const warnings: string[] = [];
  events.on('message', (d) => delivered.push(d));
  events.on('warning', (w) => warnings.push(w));
  const registry = new DeliveryRegistry<TrackedDelivery>('node1', 4);
  // Acks and dead-letters only: the settler never publishes here, so it needs no connection.
  const settler = new Settler({ connection: Object.create(null) as BrokerConnection, mainQueue: 'q', requeuePauseMs: 1000, usable: (e) => e.acks === acks, hold: undefined });
  const deliveries = new Deliveries(events, registry, decisionPolicy(topology, false), settler, { mainQueue: 'q', settleTimeoutMs, decode: 'auto', invalidBody: 'park', metrics: undefined });
  const track = (tag: number): string => {
    deliveries.track(acks, message(tag), attempt1, Date.now());
    return delivered.at(-1)!.amqp.deliveryId;
  };
  return { written, deliveries, delivered, warnings, track };
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
});
