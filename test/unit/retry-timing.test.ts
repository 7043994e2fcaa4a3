/**
 * Retry timing and broker-native delayed retry, the pure parts: the broker's delay and arguments,
 * version checks, tiers chosen for a requested delay, jitter sub-tiers, Retry-After, the attempt
 * from x-delivery-count, decide's broker route, and the ack batcher's reject.
 */
import assert from 'node:assert/strict';
import type { Message, MessageProperties } from 'amqplib';
import { parseRetryAfter, retryAfterOf } from '../../src/lib/classify/retry-after';
import { ErrorClassifier } from '../../src/lib/classify/match';
import { HTTP_STARTING_RULES } from '../../src/lib/classify/rules';
import { deliveryCountRetryInfo } from '../../src/lib/message/delivery-count';
import { decide, decisionPolicy, type Decidable } from '../../src/lib/settle/decide';
import { AckBatcher } from '../../src/lib/settle/settler';
import { brokerRetryArguments, brokerRetryBounds, brokerRetryDelay } from '../../src/lib/topology/broker-retry';
import { brokerRetryVersionProblem, runsBrokerRetry } from '../../src/lib/topology/broker-version';
import { planTopology, retryRoute, validateTopologyConfig, type RetryTopologyConfig } from '../../src/lib/topology/plan';
import { jitteredDelays, retryQueueChoice, retryQueueNames, tierFor } from '../../src/lib/topology/retry-queues';
import { retryWaitMs, shortWaitWarning } from '../../src/lib/topology/retry-wait';

const NOW = Date.parse('2026-11-28T12:00:00Z');

function topology(extra: Partial<RetryTopologyConfig> = {}): RetryTopologyConfig {
  return {
    mode: 'declare',
    mainExchange: 'orders',
    mainExchangeType: 'direct',
    mainQueue: 'orders',
    routingKeys: ['rk'],
    retryExchange: '',
    retryExchangeType: 'fanout',
    retryQueue: 'orders.retry',
    retryDelaysMs: [1000, 10_000],
    parkingQueue: 'orders.parking',
    maxAttempts: 5,
    maxAgeMs: 0,
    mainQueueArguments: {},
    retryQueueArguments: {},
    parkingQueueArguments: {},
    ...extra,
  };
}

function delivery(attempt: number, maxAttempts = 5): Decidable {
  const properties = { messageId: 'm-1', headers: {} } as unknown as MessageProperties;
  return { message: { content: Buffer.from('{}'), properties, fields: { exchange: 'orders', routingKey: 'rk' } }, retry: { attempt, maxAttempts }, receivedAt: NOW };
}

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

describe('retry timing (pure)', () => {
  it('a requested delay goes to the first tier at least that long, else the longest; never to an earlier tier than the attempt', () => {
    const config = topology({ retryDelaysMs: [1000, 5000, 60_000] });
    assert.equal(tierFor(config, 1), 0);
    assert.equal(tierFor(config, 1, 800), 0);
    assert.equal(tierFor(config, 1, 3000), 1, 'rounded up to 5 s');
    assert.equal(tierFor(config, 1, 5000), 1);
    assert.equal(tierFor(config, 1, 5001), 2);
    assert.equal(tierFor(config, 1, 600_000), 2, 'longer than every tier: the longest');
    assert.equal(tierFor(config, 3, 3000), 2, "the attempt's own tier is longer already");
    assert.equal(tierFor({ retryDelaysMs: [60_000, 1000, 5000] }, 1, 2000), 0, 'the attempt tier is long enough');
    assert.equal(tierFor({ retryDelaysMs: [1000, 60_000, 5000] }, 1, 2000), 2, 'unsorted tiers: the shortest that is long enough');
  });

  it('jitter: sub-tiers from the delay up to delay × (1 + %), named by delay; none without jitter', () => {
    assert.deepEqual(jitteredDelays(10_000, 30), [10_000, 11_000, 12_000, 13_000]);
    assert.deepEqual(jitteredDelays(1000, 50), [1000, 1167, 1333, 1500]);
    assert.deepEqual(jitteredDelays(10_000, 0), [10_000]);
    assert.deepEqual(jitteredDelays(2, 10), [2], 'sub-tiers of the same whole ms are one');
    const config = topology({ retryDelaysMs: [1000], retryJitterPercent: 50 });
    assert.deepEqual(retryQueueNames(config), ['orders.retry.1s', 'orders.retry.1167ms', 'orders.retry.1333ms', 'orders.retry.1500ms']);
    assert.equal(retryRoute(config), 'republish', 'jitter needs one queue per delay: retries are republished');
    assert.deepEqual(planTopology(config).queues.filter((q) => q.role === 'retry').map((q) => q.arguments['x-message-ttl']), [1000, 1167, 1333, 1500]);
    assert.deepEqual([0, 0.3, 0.6, 0.99].map((r) => retryQueueChoice(config, 1, 0, () => r).delayMs), [1000, 1167, 1333, 1500]);
    // Two tiers whose sub-tiers meet share the queue of that delay.
    assert.deepEqual(retryQueueNames(topology({ retryDelaysMs: [1000, 1500], retryJitterPercent: 50 })), ['orders.retry.1s', 'orders.retry.1167ms', 'orders.retry.1333ms', 'orders.retry.1500ms', 'orders.retry.1750ms', 'orders.retry.2s', 'orders.retry.2250ms']);
    assert.ok(validateTopologyConfig(topology({ retryJitterPercent: 150 })).some((p) => p.includes('0 (none) to 100')));
  });

  it('decide: a republished retry goes to the tier of the requested delay and its due time follows the tier', () => {
    const config = topology({ retryDelaysMs: [1000, 5000], retryQueueArguments: { 'x-queue-type': 'quorum' } });
    const policy = { ...decisionPolicy(config, false), random: () => 0 };
    const decision = decide(policy, delivery(1), 'retry', 'busy', NOW, undefined, 'transient', 3000);
    assert.equal(decision.kind === 'republish' && decision.queue, 'orders.retry.5s');
    assert.equal(decision.kind === 'republish' && decision.options.headers?.['retry-not-before'], NOW + 5000);
    const jittered = decide({ ...decisionPolicy(topology({ retryDelaysMs: [1000], retryJitterPercent: 50 }), false), random: () => 0.99 }, delivery(1), 'retry', 'busy', NOW);
    assert.equal(jittered.kind === 'republish' && jittered.queue, 'orders.retry.1500ms');
  });

  it('the wait a retry gets, and a warning where it is shorter than asked', () => {
    assert.equal(retryWaitMs(topology(), 1, 3000), 10_000);
    assert.equal(retryWaitMs(topology({ retryDelaysMs: [1000] }), 1, 3000), 1000, 'one retry queue: its delay');
    assert.equal(retryWaitMs(topology({ delayedRetry: 'broker', retryDelaysMs: [1000, 4000] }), 2, 3000), 2000, "the broker's delay");
    assert.equal(shortWaitWarning(topology(), 1, 3000), undefined);
    assert.match(shortWaitWarning(topology({ retryDelaysMs: [1000] }), 1, 3000) ?? '', /waits 1000 ms: one retry delay cannot be lengthened per message: add backoff tiers/);
    assert.match(shortWaitWarning(topology({ delayedRetry: 'broker', retryDelaysMs: [1000] }), 1, 3000) ?? '', /broker-native delayed retry waits the broker's delay/);
    assert.match(shortWaitWarning(topology(), 1, 60_000) ?? '', /no retry tier is that long/);
  });

  it('Retry-After: delay-seconds or an HTTP date, from msg.headers in any case; anything else is ignored', () => {
    assert.equal(parseRetryAfter('3', NOW), 3000);
    assert.equal(parseRetryAfter(' 120 ', NOW), 120_000);
    assert.equal(parseRetryAfter(new Date(NOW + 7000).toUTCString(), NOW), 7000);
    assert.equal(parseRetryAfter(new Date(NOW - 7000).toUTCString(), NOW), 0, 'a past date: at once');
    assert.equal(parseRetryAfter('soon', NOW), undefined);
    assert.equal(parseRetryAfter('-3', NOW), undefined);
    assert.equal(parseRetryAfter('2026-11-28', NOW), undefined, 'not an HTTP date');
    assert.equal(parseRetryAfter('999999999', NOW), 86_400_000, 'at most a day');
    assert.equal(retryAfterOf({ headers: { 'Retry-After': '5' } }, NOW), 5000);
    assert.equal(retryAfterOf({ headers: {} }, NOW), undefined);
    assert.equal(retryAfterOf({}, NOW), undefined);
  });

  it('a transient HTTP status rule honours Retry-After; a permanent rule and other matches do not', () => {
    const classifier = new ErrorClassifier(HTTP_STARTING_RULES);
    assert.deepEqual(classifier.classify({ statusCode: 429, msg: { headers: { 'retry-after': '3' } }, now: NOW }), { kind: 'transient', rule: 'HTTP timeout or throttled', delayMs: 3000 });
    assert.deepEqual(classifier.classify({ statusCode: 503, msg: { headers: { 'retry-after': '10' } }, now: NOW }), { kind: 'transient', rule: 'HTTP server error', delayMs: 10_000 });
    assert.deepEqual(classifier.classify({ statusCode: 503, msg: { headers: {} }, now: NOW }), { kind: 'transient', rule: 'HTTP server error' });
    assert.deepEqual(classifier.classify({ statusCode: 400, msg: { headers: { 'retry-after': '3' } }, now: NOW }), { kind: 'permanent', rule: 'HTTP client error' });
  });
});
