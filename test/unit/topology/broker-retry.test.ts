/**
 * Retry timing and broker-native delayed retry, the pure parts: the broker's delay and arguments,
 * version checks, tiers chosen for a requested delay, jitter sub-tiers, Retry-After, the attempt
 * from x-delivery-count, decide's broker route, and the ack batcher's reject.
 */
import assert from 'node:assert/strict';
import type { Message } from 'amqplib';
import { deliveryCountRetryInfo } from '../../../src/lib/message/delivery-count';
import { decide, decisionPolicy } from '../../../src/lib/settle/decide';
import { AckBatcher } from '../../../src/lib/settle/settler';
import { brokerRetryArguments, brokerRetryBounds, brokerRetryDelay } from '../../../src/lib/topology/broker-retry';
import { brokerRetryVersionProblem, runsBrokerRetry } from '../../../src/lib/topology/broker-version';
import { planTopology, retryRoute, validateTopologyConfig, type RetryTopologyConfig } from '../../../src/lib/topology/plan';
import { NOW, topology, delivery } from '../fixtures/retry-timing';

describe('broker-native delayed retry (pure)', () => {
  it('the broker delays min × failures, capped at max (as measured on 4.3.6: 1 s, 2 s, 3 s …)', () => {
    assert.deepEqual([1, 2, 3, 4, 9].map((n) => brokerRetryDelay({ minMs: 1000, maxMs: 2500 }, n)), [1000, 2000, 2500, 2500, 2500]);
    assert.deepEqual(brokerRetryBounds([400, 1000]), { minMs: 400, maxMs: 1000 });
    assert.deepEqual(brokerRetryBounds([3000]), { minMs: 3000, maxMs: 3000 });
    assert.deepEqual(brokerRetryBounds([5000, 1000]), { minMs: 5000, maxMs: 5000 });
  });

  it('plans a quorum main queue with the delayed-retry arguments and the delivery limit, no retry queue or exchange', () => {
    const config = topology({ delayedRetry: 'broker', retryDelaysMs: [1000, 30_000], maxAttempts: 4 });
    assert.equal(retryRoute(config), 'broker');
    const plan = planTopology(config);
    assert.equal(plan.needsBrokerRetry, true);
    assert.deepEqual(plan.queues.map((q) => q.role), ['main', 'parking']);
    assert.deepEqual(plan.queues[0]?.arguments, {
      'x-queue-type': 'quorum',
      'x-delayed-retry-type': 'failed',
      'x-delayed-retry-min': 1000,
      'x-delayed-retry-max': 30_000,
      'x-delivery-limit': 4,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'orders.parking',
    });
    assert.deepEqual(brokerRetryArguments(config), plan.queues[0]?.arguments);
    assert.deepEqual(plan.exchanges.map((e) => e.name), ['orders']);
    assert.deepEqual(validateTopologyConfig(config), []);
    assert.equal(planTopology(topology()).needsBrokerRetry, undefined);
  });

  it('refuses what broker-native retry cannot do: a classic main queue, a 0 delay, jitter, an owned argument set otherwise; a retry exchange is left alone', () => {
    const problems = (extra: Partial<RetryTopologyConfig>) => validateTopologyConfig(topology({ delayedRetry: 'broker', ...extra }));
    // The README's classic example switches with the one field: its retry exchange is simply not used.
    assert.deepEqual(problems({ retryExchange: 'retry-exchange' }), []);
    assert.deepEqual(planTopology(topology({ delayedRetry: 'broker', retryExchange: 'retry-exchange' })).exchanges.map((e) => e.name), ['orders']);
    assert.ok(problems({ mainQueueArguments: { 'x-queue-type': 'classic' } }).some((p) => p.includes('needs a quorum main queue')));
    assert.ok(problems({ retryDelaysMs: [0] }).some((p) => p.includes('at least 1 ms')));
    assert.ok(problems({ retryJitterPercent: 20 }).some((p) => p.includes('jitter works on retry queues')));
    assert.ok(problems({ mainQueueArguments: { 'x-delivery-limit': 20 } }).some((p) => p.includes('x-delivery-limit is set by the retry topology')));
    assert.deepEqual(problems({ mainQueueArguments: { 'x-queue-type': 'quorum' } }), []);
  });

  it('needs RabbitMQ 4.3: older versions are named, newer pass', () => {
    assert.ok(runsBrokerRetry('4.3.6') && runsBrokerRetry('4.10.0') && !runsBrokerRetry('4.2.9') && runsBrokerRetry('4.3') && !runsBrokerRetry('') && !runsBrokerRetry(undefined));
    assert.equal(brokerRetryVersionProblem('4.3.6'), undefined);
    assert.equal(brokerRetryVersionProblem('5.0.0'), undefined);
    assert.match(brokerRetryVersionProblem('3.10.8') ?? '', /needs RabbitMQ 4\.3 or later, this is RabbitMQ 3\.10\.8/);
    assert.match(brokerRetryVersionProblem('4.0.5') ?? '', /this is RabbitMQ 4\.0\.5/);
    assert.match(brokerRetryVersionProblem(undefined) ?? '', /does not say its version/);
  });

  it('the attempt is x-delivery-count + 1 (or the package header a replay kept, when larger)', () => {
    assert.equal(deliveryCountRetryInfo(undefined, 3).attempt, 1);
    assert.deepEqual(deliveryCountRetryInfo({ 'x-delivery-count': 2 }, 3), { attempt: 3, maxAttempts: 3, remaining: 0, firstDeathReason: null, deaths: [] });
    assert.equal(deliveryCountRetryInfo({ 'x-delivery-count': { '!': 'long', value: 4 } }, 9).attempt, 5);
    assert.equal(deliveryCountRetryInfo({ 'x-delivery-count': 1, 'retry-attempt': 3 }, 9).attempt, 4);
    assert.equal(deliveryCountRetryInfo({ 'x-delivery-count': 'abc' }, 9).attempt, 1);
  });

  it('decide: a retry is a reject with requeue; the last attempt is parked by the package', () => {
    const policy = decisionPolicy(topology({ delayedRetry: 'broker', maxAttempts: 3 }), false);
    assert.deepEqual(decide(policy, delivery(1, 3), 'retry', 'down', NOW), { kind: 'broker-retry' });
    assert.deepEqual(decide(policy, delivery(2, 3), 'retry', 'down', NOW, undefined, 'transient', 60_000), { kind: 'broker-retry' });
    const last = decide(policy, delivery(3, 3), 'retry', 'down', NOW);
    assert.equal(last.kind, 'park');
    assert.equal(last.kind === 'park' && last.reason, 'max attempts (3) reached; last error: down');
    assert.equal(decide(policy, delivery(1, 3), 'retry', 'bad', NOW, undefined, 'permanent').kind, 'park');
  });

  it('the ack batcher writes a requeue reject at once, one frame; a reject without requeue is batched as a dead-letter, one reject frame of its own', () => {
    const sent: string[] = [];
    const channel = {
      ack: (m: Message, all?: boolean) => void sent.push(`ack ${m.fields.deliveryTag}${all ? '+' : ''}`),
      nack: (m: Message, all?: boolean, requeue?: boolean) => void sent.push(`nack ${m.fields.deliveryTag}${all ? '+' : ''}${requeue ? ' requeue' : ''}`),
      reject: (m: Message, requeue?: boolean) => void sent.push(`reject ${m.fields.deliveryTag}${requeue ? ' requeue' : ''}`),
      nackAll: (requeue?: boolean) => void sent.push(`nack all${requeue ? ' requeue' : ''}`),
    };
    const flushes: Array<() => void> = [];
    const batcher = new AckBatcher(channel, (flush) => flushes.push(flush));
    const msg = (tag: number) => ({ fields: { deliveryTag: tag }, properties: {}, content: Buffer.alloc(0) }) as unknown as Message;
    const [m1, m2, m3] = [msg(1), msg(2), msg(3)];
    for (const m of [m1, m2, m3]) batcher.arrived(m);
    batcher.ack(m1);
    batcher.reject(m2, true);
    assert.deepEqual(sent, ['reject 2 requeue'], 'at once, before the pending ack');
    batcher.reject(m3, false);
    for (const flush of flushes.splice(0)) flush();
    // A dead-letter is a reject of its own (every version counts it), before the ack run that may cover it.
    assert.deepEqual(sent, ['reject 2 requeue', 'reject 3', 'ack 1+']);
    batcher.close();
    assert.throws(() => batcher.reject(msg(4), true), /Channel closed/);
  });
});
