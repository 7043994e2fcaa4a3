/**
 * Retry timing and broker-native delayed retry, the pure parts: the broker's delay and arguments,
 * version checks, tiers chosen for a requested delay, jitter sub-tiers, Retry-After, the attempt
 * from x-delivery-count, decide's broker route, and the ack batcher's reject.
 */
import assert from 'node:assert/strict';
import { parseRetryAfter, retryAfterOf } from '../../../src/lib/classify/retry-after';
import { ErrorClassifier } from '../../../src/lib/classify/match';
import { HTTP_STARTING_RULES } from '../../../src/lib/classify/rules';
import { decide, decisionPolicy } from '../../../src/lib/settle/decide';
import { planTopology, retryRoute, validateTopologyConfig } from '../../../src/lib/topology/plan';
import { jitteredDelays, retryQueueChoice, retryQueueNames, tierFor } from '../../../src/lib/topology/retry-queues';
import { retryWaitMs, shortWaitWarning } from '../../../src/lib/topology/retry-wait';
import { NOW, topology, delivery } from '../fixtures/retry-timing';

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
