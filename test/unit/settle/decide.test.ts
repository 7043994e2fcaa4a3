/** decide(): every branch of the settle decision, without a broker. */
import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { ATTEMPT_HEADER, FIRST_SEEN_HEADER, NOT_BEFORE_HEADER } from '../../../src/lib/message/attempts';
import { decide, decisionPolicy, MALFORMED_X_DEATH, onArrival, type Decidable, type Decision, type DecisionPolicy } from '../../../src/lib/settle/decide';
import { PARK_HEADERS } from '../../../src/lib/message/copies';
import type { RetryTopologyConfig } from '../../../src/lib/topology/plan';

const NOW = Date.parse('2026-11-23T12:00:00Z');

function topology(extra: Partial<RetryTopologyConfig> = {}): RetryTopologyConfig {
  return {
    mode: 'declare',
    mainExchange: 'main-exchange',
    mainExchangeType: 'direct',
    mainQueue: 'main-queue',
    routingKeys: ['rk'],
    retryExchange: '',
    retryExchangeType: 'fanout',
    retryQueue: 'main-queue.retry',
    retryDelaysMs: [5000],
    parkingQueue: 'main-queue.parking',
    maxAttempts: 3,
    maxAgeMs: 0,
    mainQueueArguments: {},
    retryQueueArguments: {},
    parkingQueueArguments: {},
    ...extra,
  };
}

function delivery(attempt: number, options: { maxAttempts?: number; headers?: Record<string, unknown>; timestamp?: number; receivedAt?: number } = {}): Decidable {
  const properties = { messageId: 'm-1', contentType: 'application/json', deliveryMode: 2, headers: options.headers ?? { origin: 'test' }, timestamp: options.timestamp } as unknown as MessageProperties;
  return {
    message: { content: Buffer.from('{}'), properties, fields: { exchange: 'main-exchange', routingKey: 'rk' } },
    retry: { attempt, maxAttempts: options.maxAttempts ?? 3 },
    receivedAt: options.receivedAt ?? NOW,
  };
}

function parked(decision: Decision): Extract<Decision, { kind: 'park' }> {
  assert.equal(decision.kind, 'park');
  return decision;
}

function republished(decision: Decision): Extract<Decision, { kind: 'republish' }> {
  assert.equal(decision.kind, 'republish');
  return decision;
}

describe('decide()', () => {
  const classic: DecisionPolicy = decisionPolicy(topology(), false);

  it('ack: acks, whatever the attempt', () => {
    assert.deepEqual(decide(classic, delivery(3), 'ack', 'ignored', NOW), { kind: 'ack' });
  });

  it('retry with attempts left, one delay on a classic queue: dead-letters to the retry queue', () => {
    assert.equal(classic.route, 'dead-letter');
    assert.deepEqual(decide(classic, delivery(1), 'retry', 'boom', NOW), { kind: 'dead-letter' });
  });

  it('retry on the last attempt: parks, with the last error in the reason', () => {
    const d = parked(decide(classic, delivery(3), 'retry', 'boom', NOW));
    assert.equal(d.queue, 'main-queue.parking');
    assert.equal(d.reason, 'max attempts (3) reached; last error: boom');
    assert.equal(d.options.headers?.[PARK_HEADERS.reason], 'max attempts (3) reached; last error: boom');
    assert.equal(d.options.headers?.[PARK_HEADERS.attempt], 3);
    assert.equal(d.options.headers?.[PARK_HEADERS.time], new Date(NOW).toISOString());
    assert.equal(d.options.headers?.origin, 'test');
    assert.equal(d.options.persistent, true);
    assert.equal(d.options.mandatory, true);
  });

  it('retry on the last attempt without an error text: parks with the bare reason', () => {
    assert.equal(parked(decide(classic, delivery(3), 'retry', '', NOW)).reason, 'max attempts (3) reached');
  });

  it('retry of a message older than the max age: parks, though attempts are left', () => {
    const policy = decisionPolicy(topology({ maxAgeMs: 60_000 }), false);
    const old = delivery(1, { headers: { [FIRST_SEEN_HEADER]: NOW - 120_000 } });
    assert.equal(parked(decide(policy, old, 'retry', 'boom', NOW)).reason, 'older than the max age of 60 s; last error: boom');
  });

  it('max age without any clue in the message: its age counts from receipt by this consumer', () => {
    const policy = decisionPolicy(topology({ maxAgeMs: 60_000 }), false);
    assert.deepEqual(decide(policy, delivery(1, { receivedAt: NOW - 1000 }), 'retry', '', NOW), { kind: 'dead-letter' });
    assert.equal(parked(decide(policy, delivery(1, { receivedAt: NOW - 61_000 }), 'retry', '', NOW)).reason, 'older than the max age of 60 s');
  });

  it('max age reads the publisher timestamp (seconds) too', () => {
    const policy = decisionPolicy(topology({ maxAgeMs: 60_000 }), false);
    const stamped = delivery(1, { timestamp: Math.floor((NOW - 3_600_000) / 1000) });
    assert.equal(parked(decide(policy, stamped, 'retry', '', NOW)).reason, 'older than the max age of 60 s');
  });

  it('retry with backoff tiers: a confirmed copy in the tier of the attempt, the last tier repeating', () => {
    const policy = decisionPolicy(topology({ retryDelaysMs: [1000, 10_000], maxAttempts: 5 }), false);
    assert.equal(policy.route, 'republish');
    const first = republished(decide(policy, delivery(1, { maxAttempts: 5, receivedAt: NOW - 5 }), 'retry', 'boom', NOW));
    assert.equal(first.queue, 'main-queue.retry.1s');
    assert.equal(first.options.headers?.[ATTEMPT_HEADER], 1);
    assert.equal(first.options.headers?.[FIRST_SEEN_HEADER], NOW - 5);
    assert.equal(first.options.headers?.origin, 'test');
    assert.equal(first.options.persistent, true);
    assert.equal(first.options.mandatory, true);
    assert.equal(republished(decide(policy, delivery(2, { maxAttempts: 5 }), 'retry', '', NOW)).queue, 'main-queue.retry.10s');
    assert.equal(republished(decide(policy, delivery(4, { maxAttempts: 5 }), 'retry', '', NOW)).queue, 'main-queue.retry.10s');
  });

  it('retry with tiers and a max age: the copy keeps the first-seen time the age was measured from', () => {
    const policy = decisionPolicy(topology({ retryDelaysMs: [1000, 10_000], maxAgeMs: 60_000 }), false);
    const d = republished(decide(policy, delivery(1, { headers: { [FIRST_SEEN_HEADER]: NOW - 30_000 } }), 'retry', '', NOW));
    assert.equal(d.options.headers?.[FIRST_SEEN_HEADER], NOW - 30_000);
  });

  it('retry on a quorum main queue: republishes to the retry queue (the broker dead-letters to parking)', () => {
    const policy = decisionPolicy(topology({ mainQueueArguments: { 'x-queue-type': 'quorum' } }), false);
    assert.equal(policy.route, 'republish');
    assert.equal(republished(decide(policy, delivery(2), 'retry', '', NOW)).queue, 'main-queue.retry');
    assert.equal(parked(decide(policy, delivery(3), 'retry', '', NOW)).reason, 'max attempts (3) reached');
  });

  it('retry to quorum tiers: the copy carries its due time (now + the tier delay) for the retry mover; classic tiers do not', () => {
    const quorumTiers = { retryDelaysMs: [1000, 10_000], retryQueueArguments: { 'x-queue-type': 'quorum' } };
    const policy = decisionPolicy(topology({ ...quorumTiers, maxAttempts: 5 }), false);
    assert.equal(republished(decide(policy, delivery(1, { maxAttempts: 5 }), 'retry', '', NOW)).options.headers?.[NOT_BEFORE_HEADER], NOW + 1000);
    assert.equal(republished(decide(policy, delivery(3, { maxAttempts: 5 }), 'retry', '', NOW)).options.headers?.[NOT_BEFORE_HEADER], NOW + 10_000);
    const classicTiers = decisionPolicy(topology({ retryDelaysMs: [1000, 10_000], maxAttempts: 5 }), false);
    assert.equal(republished(decide(classicTiers, delivery(1, { maxAttempts: 5 }), 'retry', '', NOW)).options.headers?.[NOT_BEFORE_HEADER], undefined);
  });

  it('a permanent retry parks at once with its reason, the attempt not advanced, and says so in park-error-kind', () => {
    const d = parked(decide(classic, delivery(1), 'retry', 'permanent (HTTP client error): 400', NOW, { name: 'HTTPError', message: '400' }, 'permanent'));
    assert.equal(d.reason, 'permanent (HTTP client error): 400');
    assert.equal(d.queue, 'main-queue.parking');
    const headers = d.options.headers as Record<string, unknown>;
    assert.equal(headers[PARK_HEADERS.reason], 'permanent (HTTP client error): 400');
    assert.equal(headers[PARK_HEADERS.attempt], 1);
    assert.equal(headers['park-error-kind'], 'permanent');
    assert.equal(headers['park-error-name'], 'HTTPError');
    // Ordered mode: a permanent failure does not hold the line.
    assert.equal(parked(decide(decisionPolicy(topology(), true), delivery(1), 'retry', 'permanent (x): y', NOW, undefined, 'permanent')).reason, 'permanent (x): y');
  });

  it('a transient retry goes on as without rules; parked out of attempts it says transient', () => {
    assert.deepEqual(decide(classic, delivery(1), 'retry', 'boom', NOW, undefined, 'transient'), { kind: 'dead-letter' });
    const d = parked(decide(classic, delivery(3), 'retry', 'boom', NOW, undefined, 'transient'));
    assert.equal(d.reason, 'max attempts (3) reached; last error: boom');
    assert.equal((d.options.headers as Record<string, unknown>)['park-error-kind'], 'transient');
    // Without a kind (a park node, an invalid body) there is no such header.
    assert.equal((parked(decide(classic, delivery(1), 'park', 'by hand', NOW)).options.headers as Record<string, unknown>)['park-error-kind'], undefined);
  });

  it('a done retry acks', () => {
    assert.deepEqual(decide(classic, delivery(2), 'retry', 'duplicate key', NOW, undefined, 'done'), { kind: 'ack' });
    assert.deepEqual(decide(decisionPolicy(topology(), true), delivery(2), 'retry', '', NOW, undefined, 'done'), { kind: 'ack' });
  });

  it('retry in ordered mode: holds with the reason, whatever the attempt or age', () => {
    const policy = decisionPolicy(topology({ maxAgeMs: 1 }), true);
    assert.deepEqual(decide(policy, delivery(7, { maxAttempts: 0, receivedAt: 0 }), 'retry', 'boom', NOW), { kind: 'hold', reason: 'boom' });
  });

  it('park in ordered mode, and ack: not held', () => {
    const policy = decisionPolicy(topology(), true);
    assert.equal(parked(decide(policy, delivery(1, { maxAttempts: 0 }), 'park', 'bad', NOW)).reason, 'bad');
    assert.deepEqual(decide(policy, delivery(1), 'ack', '', NOW), { kind: 'ack' });
  });

  it('park: parks at once with the given reason, or "parked" without one', () => {
    const d = parked(decide(classic, delivery(1), 'park', 'negative amount', NOW));
    assert.equal(d.reason, 'negative amount');
    assert.equal(d.options.headers?.[PARK_HEADERS.attempt], 1);
    assert.equal(d.options.headers?.[PARK_HEADERS.originalQueue], 'main-queue');
    assert.equal(parked(decide(classic, delivery(1), 'park', '', NOW)).reason, 'parked by the flow');
  });
});

describe('onArrival()', () => {
  it('passes a decoded body on', () => {
    assert.equal(onArrival(undefined, 'park'), 'deliver');
    assert.equal(onArrival(undefined, 'error'), 'deliver');
  });

  it('parks a body that does not decode, or reports it for the flow to settle', () => {
    assert.equal(onArrival('body is not valid JSON', 'park'), 'park');
    assert.equal(onArrival('body is not valid JSON', 'error'), 'report-invalid');
  });
});

describe('decide() with a malformed x-death header (RabbitMQ 3.10 crashes the queue dead-lettering it)', () => {
  const classic: DecisionPolicy = decisionPolicy(topology(), false);
  const forged = { 'x-death': [{ count: 'abc', queue: 'main-queue', reason: 'rejected', exchange: '', 'routing-keys': ['rk'] }], origin: 'test' };

  it('retry never rejects it: parks it with the reason, and the parked copy leaves the header out', () => {
    const decision = parked(decide(classic, delivery(1, { headers: forged }), 'retry', 'boom', NOW));
    assert.equal(decision.reason, `${MALFORMED_X_DEATH} (x-death entry 1 has count 'abc', not a whole number); last error: boom`);
    assert.equal(decision.options.headers?.['x-death'], undefined);
    assert.equal(decision.options.headers?.origin, 'test');
    assert.equal(forged['x-death'].length, 1, 'the delivery itself is left alone');
  });

  it('parks it on the republish route too (tiers, quorum)', () => {
    const tiers = decisionPolicy(topology({ retryDelaysMs: [1000, 10_000] }), false);
    assert.match(parked(decide(tiers, delivery(1, { headers: forged }), 'retry', '', NOW)).reason, /^malformed x-death header \(/);
  });

  it('ack acks it; ordered mode parks it at its first failure instead of holding the line (neither rejects)', () => {
    assert.deepEqual(decide(classic, delivery(1, { headers: forged }), 'ack', '', NOW), { kind: 'ack' });
    const decision = parked(decide(decisionPolicy(topology(), true), delivery(1, { headers: forged }), 'retry', 'boom', NOW));
    assert.equal(decision.reason, `${MALFORMED_X_DEATH} (x-death entry 1 has count 'abc', not a whole number); last error: boom`);
    assert.equal(decide(decisionPolicy(topology(), true), delivery(1), 'retry', 'boom', NOW).kind, 'hold', 'a well-formed one is held as before');
  });

  it('a park asked by the flow keeps its reason, without the header', () => {
    const decision = parked(decide(classic, delivery(1, { headers: forged }), 'park', 'bad amount', NOW));
    assert.equal(decision.reason, 'bad amount');
    assert.equal(decision.options.headers?.['x-death'], undefined);
  });

  // Issue 29: whatever its shape, a forged header parks at the first failure (never a dead-letter, a requeue or a tier).
  const shapes: Array<[string, unknown, string]> = [
    ['a string', 'forged', 'x-death is not an array'],
    ['a number', 7, 'x-death is not an array'],
    ['one table instead of a list', { count: 1, queue: 'main-queue', reason: 'rejected' }, 'x-death is not an array'],
    ['a list of non-tables', ['a', 1], 'x-death entry 1 is not a table'],
  ];
  // Every way a retry is decided: dead-letter, backoff tiers, a quorum main queue, a max age (which reads
  // the header for the first-seen time), each as a retry-settle asks (kind transient) and without a kind.
  const policies: Array<[string, DecisionPolicy]> = [
    ['dead-letter', classic],
    ['tiers', decisionPolicy(topology({ retryDelaysMs: [1000, 10_000] }), false)],
    ['quorum', decisionPolicy(topology({ mainQueueArguments: { 'x-queue-type': 'quorum' } }), false)],
    ['max age', decisionPolicy(topology({ maxAgeMs: 3_600_000 }), false)],
  ];
  for (const [shape, value, problem] of shapes) {
    it(`x-death as ${shape}: the first retry parks it with the reason, on every route`, () => {
      for (const [route, policy] of policies) {
        for (const kind of [undefined, 'transient'] as const) {
          const decision = parked(decide(policy, delivery(1, { headers: { 'x-death': value, origin: 'test' } }), 'retry', 'boom', NOW, undefined, kind));
          assert.equal(decision.reason, `${MALFORMED_X_DEATH} (${problem}); last error: boom`, `${route}, kind ${kind}`);
          assert.equal(decision.options.headers?.['x-death'], undefined);
          assert.equal(decision.options.headers?.origin, 'test');
        }
      }
    });
  }

  it('a well-formed x-death is kept on the parked copy', () => {
    const headers = { 'x-death': [{ count: 2, queue: 'main-queue', reason: 'rejected', exchange: 'main-exchange', 'routing-keys': ['rk'] }] };
    assert.deepEqual(parked(decide(classic, delivery(3, { headers }), 'retry', '', NOW)).options.headers?.['x-death'], headers['x-death']);
  });
});
