import assert from 'node:assert/strict';
import { NOT_BEFORE_HEADER } from '../../../src/lib/message/attempts';
import { dueAt, moverTiers } from '../../../src/lib/consume/retry-mover';
import { MOVER_HORIZON_MS, MOVER_TTL_SLACK_MS, planTopology, retryQueueFor, retryQueueNames, retryRoute, validateTopologyConfig, type RetryTopologyConfig } from '../../../src/lib/topology/plan';
import { describeDifference, describeDifferences, describePreconditionFailure, parsePreconditionFailure } from '../../../src/lib/topology/diff';
import { parseDelays, parseQueueArguments } from '../../../src/lib/topology/parse';
import { seedTopology } from '../fixtures/topology-seed';

const seed: RetryTopologyConfig = { ...seedTopology };

describe('topology plan', () => {
  it('plans the seed layout', () => {
    const plan = planTopology(seed);
    assert.deepEqual(plan.exchanges, [
      { name: 'main-exchange', type: 'direct' },
      { name: 'retry-exchange', type: 'fanout' },
    ]);
    assert.deepEqual(plan.queues, [
      { role: 'main', name: 'main-queue', arguments: { 'x-dead-letter-exchange': 'retry-exchange' } },
      { role: 'retry', name: 'retry-queue', arguments: { 'x-message-ttl': 3000, 'x-dead-letter-exchange': 'main-exchange' } },
      { role: 'parking', name: 'parking-queue', arguments: {} },
    ]);
    assert.deepEqual(plan.bindings, [
      { queue: 'main-queue', exchange: 'main-exchange', routingKey: 'srvc.transact.cash' },
      { queue: 'retry-queue', exchange: 'retry-exchange', routingKey: '' },
    ]);
  });

  it('plans per-queue routing through the default exchange when there is no retry exchange', () => {
    const plan = planTopology({ ...seed, retryExchange: '' });
    assert.deepEqual(plan.exchanges, [{ name: 'main-exchange', type: 'direct' }]);
    assert.deepEqual(plan.queues[0]?.arguments, { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'retry-queue' });
    assert.deepEqual(plan.queues[1]?.arguments, { 'x-message-ttl': 3000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' });
    assert.equal(plan.bindings.length, 1);
  });

  it('merges extra arguments, numbers staying numbers', () => {
    const args = parseQueueArguments('{"x-max-length":50000,"x-overflow":"reject-publish","x-single-active-consumer":true}', 'main');
    assert.deepEqual(args, { 'x-max-length': 50000, 'x-overflow': 'reject-publish', 'x-single-active-consumer': true });
    const plan = planTopology({ ...seed, mainQueueArguments: args });
    assert.deepEqual(plan.queues[0]?.arguments, { ...args, 'x-dead-letter-exchange': 'retry-exchange' });
  });

  it('rejects bad extra arguments with a reason', () => {
    assert.throws(() => parseQueueArguments('{', 'main queue arguments'), /main queue arguments: not valid JSON/);
    assert.throws(() => parseQueueArguments('[1]', 'x'), /must be a JSON object/);
    assert.throws(() => parseQueueArguments('{"a":{"b":1}}', 'x'), /a must be a string, number or boolean/);
    assert.deepEqual(parseQueueArguments('', 'x'), {});
  });

  it('validates names, numbers and owned arguments', () => {
    assert.deepEqual(validateTopologyConfig(seed), []);
    const problems = validateTopologyConfig({
      ...seed,
      mainQueue: 'amq.q',
      parkingQueue: 'retry-queue',
      maxAttempts: 0,
      retryDelaysMs: [-1],
      retryExchange: 'main-exchange',
      mainQueueArguments: { 'x-dead-letter-exchange': 'elsewhere' },
    });
    assert.ok(problems.some((p) => p.includes("'amq.q'")));
    assert.ok(problems.some((p) => p.includes('must all be different')));
    assert.ok(problems.some((p) => p.includes('max attempts')));
    assert.ok(problems.some((p) => p.includes('retry delay')));
    assert.ok(problems.some((p) => p.includes('retry exchange must differ')));
    assert.ok(problems.some((p) => p.includes('x-dead-letter-exchange is set by the retry topology')));
  });

  it('says only that the main queue name is empty when it is (the retry and parking names derive from it)', () => {
    assert.deepEqual(validateTopologyConfig({ ...seed, mainQueue: '', retryQueue: '', parkingQueue: '' }), ['main queue name is empty']);
    // A parking queue named by hand is still checked, and an empty one with a main queue is still said.
    assert.match(validateTopologyConfig({ ...seed, mainQueue: '', retryQueue: '', parkingQueue: 'amq.p' }).join('; '), /parking queue 'amq\.p'/);
    assert.deepEqual(validateTopologyConfig({ ...seed, parkingQueue: '' }), ['parking queue name is empty']);
  });
});

describe('quorum retry tiers and the retry mover', () => {
  const tiers: RetryTopologyConfig = { ...seed, retryExchange: '', retryDelaysMs: [1000, 600_000, 600_001], retryQueueArguments: { 'x-queue-type': 'quorum' } };
  const ttls = (config: RetryTopologyConfig): unknown[] => planTopology(config).queues.filter((q) => q.role === 'retry').map((q) => q.arguments['x-message-ttl']);

  it('quorum tiers up to the horizon get the mover and TTL = delay + slack; longer tiers keep TTL = delay', () => {
    assert.deepEqual(moverTiers(tiers), [
      { queue: 'retry-queue.1s', delayMs: 1000 },
      { queue: 'retry-queue.10m', delayMs: MOVER_HORIZON_MS },
    ]);
    assert.deepEqual(ttls(tiers), [1000 + MOVER_TTL_SLACK_MS, 600_000 + MOVER_TTL_SLACK_MS, 600_001]);
    assert.equal(MOVER_TTL_SLACK_MS, 60_000);
    const args = planTopology(tiers).queues[1]?.arguments;
    assert.deepEqual(args, { 'x-queue-type': 'quorum', 'x-message-ttl': 61_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' });
  });

  it('a quorum main queue with quorum retry queue (one delay, republish route) gets the mover', () => {
    const one: RetryTopologyConfig = { ...seed, retryExchange: '', mainQueueArguments: { 'x-queue-type': 'quorum' }, retryQueueArguments: { 'x-queue-type': 'quorum' } };
    assert.deepEqual(moverTiers(one), [{ queue: 'retry-queue', delayMs: 3000 }]);
    assert.deepEqual(ttls(one), [63_000]);
  });

  it('classic layouts stay as they are: no mover, TTL = delay', () => {
    assert.deepEqual(moverTiers(seed), []);
    assert.deepEqual(ttls(seed), [3000]);
    const classicTiers = { ...tiers, retryQueueArguments: {} };
    assert.deepEqual(moverTiers(classicTiers), []);
    assert.deepEqual(ttls(classicTiers), [1000, 600_000, 600_001]);
    // Quorum retry queue but the dead-letter route (classic main queue, one delay): the broker moves it.
    const deadLetter = { ...seed, retryQueueArguments: { 'x-queue-type': 'quorum' } };
    assert.equal(retryRoute(deadLetter), 'dead-letter');
    assert.deepEqual(moverTiers(deadLetter), []);
    assert.deepEqual(ttls(deadLetter), [3000]);
  });

  it('a user TTL in the retry arguments that differs from the one the topology sets is refused', () => {
    const own = { ...tiers, retryDelaysMs: [1000], mainQueueArguments: { 'x-queue-type': 'quorum' }, retryQueueArguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 1000 } };
    assert.ok(validateTopologyConfig(own).some((p) => p.includes('retry queue argument x-message-ttl is set by the retry topology')));
  });

  it('the due time of a held retry: its header, at once without one, never more than a delay ahead', () => {
    assert.equal(dueAt({ [NOT_BEFORE_HEADER]: 5000 }, 1000, 4500), 5000);
    assert.equal(dueAt({ [NOT_BEFORE_HEADER]: 3000 }, 1000, 4500), 3000);
    assert.equal(dueAt({}, 1000, 4500), 4500);
    assert.equal(dueAt(undefined, 1000, 4500), 4500);
    assert.equal(dueAt({ [NOT_BEFORE_HEADER]: 'soon' }, 1000, 4500), 4500);
    assert.equal(dueAt({ [NOT_BEFORE_HEADER]: 99_999_999 }, 1000, 4500), 5500);
  });
});

describe('backoff tiers and quorum queues', () => {
  const tiers: RetryTopologyConfig = { ...seed, retryExchange: '', retryDelaysMs: [1000, 10_000, 60_000] };

  it('reads delays with units', () => {
    assert.deepEqual(parseDelays('3000'), [3000]);
    assert.deepEqual(parseDelays('1s, 10s, 1m'), [1000, 10_000, 60_000]);
    assert.deepEqual(parseDelays('250ms,1.5s,1h'), [250, 1500, 3_600_000]);
    assert.throws(() => parseDelays('1s, soon'), /retry delay 'soon' is not a duration/);
    assert.throws(() => parseDelays(' '), /retry delay is empty/);
  });

  it('names one queue per delay, the last tier repeating', () => {
    assert.deepEqual(retryQueueNames(tiers), ['retry-queue.1s', 'retry-queue.10s', 'retry-queue.1m']);
    assert.deepEqual([1, 2, 3, 4, 9].map((n) => retryQueueFor(tiers, n)), ['retry-queue.1s', 'retry-queue.10s', 'retry-queue.1m', 'retry-queue.1m', 'retry-queue.1m']);
    assert.equal(retryQueueFor(seed, 5), 'retry-queue');
  });

  it('retries tiers by republishing; the main queue dead-letters only to the parking queue', () => {
    assert.equal(retryRoute(seed), 'dead-letter');
    assert.equal(retryRoute(tiers), 'republish');
    const plan = planTopology(tiers);
    assert.deepEqual(plan.queues.map((q) => [q.name, q.arguments]), [
      ['main-queue', { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'parking-queue' }],
      ['retry-queue.1s', { 'x-message-ttl': 1000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' }],
      ['retry-queue.10s', { 'x-message-ttl': 10_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' }],
      ['retry-queue.1m', { 'x-message-ttl': 60_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'main-queue' }],
      ['parking-queue', {}],
    ]);
    assert.deepEqual(validateTopologyConfig(tiers), []);
  });

  it('makes a quorum main queue republish, so a delivery-limit dead-letter is parked rather than dropped as a cycle', () => {
    const quorum: RetryTopologyConfig = { ...seed, retryExchange: '', mainQueueArguments: { 'x-queue-type': 'quorum' } };
    assert.equal(retryRoute(quorum), 'republish');
    assert.deepEqual(planTopology(quorum).queues[0]?.arguments, { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'parking-queue' });
    assert.ok(validateTopologyConfig({ ...quorum, retryExchange: 'retry-exchange' }).some((p) => p.includes('quorum main queue retries by republishing')));
    assert.ok(validateTopologyConfig({ ...tiers, retryExchange: 'retry-exchange' }).some((p) => p.includes('several retry delays')));
    assert.ok(validateTopologyConfig({ ...tiers, retryDelaysMs: [1000, 1000] }).some((p) => p.includes('must all be different')));
  });
});

describe('alternate exchange for unrouted messages', () => {
  const withAe: RetryTopologyConfig = { ...seed, alternateExchange: 'main-exchange.ae' };

  it('declares the main exchange with alternate-exchange, a fanout AE first, and a queue bound to it', () => {
    const plan = planTopology(withAe);
    assert.deepEqual(plan.exchanges.slice(0, 2), [
      { name: 'main-exchange.ae', type: 'fanout' },
      { name: 'main-exchange', type: 'direct', arguments: { 'alternate-exchange': 'main-exchange.ae' } },
    ]);
    assert.deepEqual(plan.queues.at(-1), { role: 'unrouted', name: 'main-exchange.unrouted', arguments: {} });
    assert.deepEqual(plan.bindings.at(-1), { queue: 'main-exchange.unrouted', exchange: 'main-exchange.ae', routingKey: '' });
    assert.equal(planTopology({ ...withAe, unroutedQueue: 'lost' }).queues.at(-1)?.name, 'lost');
    assert.deepEqual(planTopology(seed).exchanges[0], { name: 'main-exchange', type: 'direct' });
  });

  it('refuses an alternate exchange without a main exchange, equal to another exchange, or a clashing queue name', () => {
    assert.match(validateTopologyConfig({ ...withAe, mainExchange: '', routingKeys: [] }).join('; '), /alternate exchange needs a main exchange/);
    assert.match(validateTopologyConfig({ ...withAe, alternateExchange: 'retry-exchange' }).join('; '), /must differ from the main and retry exchanges/);
    assert.match(validateTopologyConfig({ ...withAe, unroutedQueue: 'parking-queue' }).join('; '), /must all be different/);
    assert.match(validateTopologyConfig({ ...withAe, alternateExchange: 'amq.fanout' }).join('; '), /'amq.' are reserved/);
    assert.deepEqual(validateTopologyConfig(withAe), []);
  });
});

describe('single active consumer (ordered mode)', () => {
  it('declares the main queue with x-single-active-consumer, beside the arguments the route needs', () => {
    assert.deepEqual(planTopology({ ...seed, singleActiveConsumer: true }).queues[0]?.arguments, {
      'x-dead-letter-exchange': 'retry-exchange',
      'x-single-active-consumer': true,
    });
    const quorum = planTopology({ ...seed, retryExchange: '', mainQueueArguments: { 'x-queue-type': 'quorum' }, singleActiveConsumer: true });
    assert.equal(quorum.queues[0]?.arguments['x-single-active-consumer'], true);
    assert.equal(planTopology(seed).queues[0]?.arguments['x-single-active-consumer'], undefined);
  });

  it('says what to do about a queue that exists without it', () => {
    const text = "PRECONDITION_FAILED - inequivalent arg 'x-single-active-consumer' for queue 'main-queue' in vhost '/': received the value 'true' of type 'bool' but current is none";
    assert.equal(
      describePreconditionFailure(parsePreconditionFailure(text)!),
      "queue 'main-queue': x-single-active-consumer is none on the broker, config says 'true'" +
        " (ordered mode declares the main queue with x-single-active-consumer: true, so that one consumer of all Node-RED instances gets messages;" +
        " an existing queue cannot be changed: move its messages elsewhere, delete 'main-queue' and redeploy, or use retry mode)",
    );
    assert.match(describeDifference('queue', 'main-queue', { argument: 'x-single-active-consumer', broker: undefined, config: true }), /delete 'main-queue' and redeploy/);
    const both = describeDifferences('queue', 'main-queue', [
      { argument: 'x-message-ttl', broker: 1, config: 2 },
      { argument: 'x-single-active-consumer', broker: undefined, config: true },
    ]);
    assert.match(both, /or use retry mode\)$/);
  });
});
