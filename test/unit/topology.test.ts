import assert from 'node:assert/strict';
import { NOT_BEFORE_HEADER } from '../../src/lib/message/attempts';
import { dueAt, moverTiers } from '../../src/lib/consume/retry-mover';
import {
  MOVER_HORIZON_MS,
  MOVER_TTL_SLACK_MS,
  planTopology,
  retryQueueFor,
  retryQueueNames,
  retryRoute,
  validateTopologyConfig,
  type RetryTopologyConfig,
} from '../../src/lib/topology/plan';
import type { Channel } from 'amqplib';
import { declareTopology, FIRST_DIFFERENCE_ONLY, type ChannelRunner, type DefinitionReader } from '../../src/lib/topology/apply';
import { argumentValueText, describeDifference, describeDifferences, describePreconditionFailure, diffArguments, parsePreconditionFailure } from '../../src/lib/topology/diff';
import { parseDelays, parseQueueArguments } from '../../src/lib/topology/parse';
import { seedTopology } from './fixtures/topology-seed';

const seed: RetryTopologyConfig = { ...seedTopology };
/** The way out of a queue whose arguments differ, as the sentences end. */
const wayOut = (queue: string): string =>
  ` (a queue's arguments cannot be changed: move its messages elsewhere, delete '${queue}' and redeploy, or use another queue name; see "Mismatches" in the topology guide)`;

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

describe('argument diffing', () => {
  it('finds what differs, comparing numbers by value', () => {
    const broker = { 'x-dead-letter-exchange': 'retry-exchange', 'x-message-ttl': 3000 };
    assert.deepEqual(diffArguments(broker, { 'x-message-ttl': 3000, 'x-dead-letter-exchange': 'retry-exchange' }), []);
    assert.deepEqual(diffArguments(broker, { 'x-message-ttl': 5000 }), [
      { argument: 'x-dead-letter-exchange', broker: 'retry-exchange', config: undefined },
      { argument: 'x-message-ttl', broker: 3000, config: 5000 },
    ]);
  });

  it('treats an explicit classic queue type as the default', () => {
    assert.deepEqual(diffArguments({ 'x-queue-type': 'classic' }, {}), []);
    assert.equal(diffArguments({ 'x-queue-type': 'quorum' }, {}).length, 1);
  });

  it('describes a difference naming the object and the argument', () => {
    assert.equal(
      describeDifference('queue', 'main-queue', { argument: 'x-dead-letter-exchange', broker: 'retry-exchange', config: undefined }),
      "queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says none" + wayOut('main-queue'),
    );
  });

  it("names '' as the default exchange where the argument names an exchange", () => {
    assert.equal(
      describeDifference('queue', 'q', { argument: 'x-dead-letter-exchange', broker: undefined, config: '' }),
      "queue 'q': x-dead-letter-exchange is none on the broker, config says the default exchange ('')" + wayOut('q'),
    );
    assert.match(describeDifference('exchange', 'e', { argument: 'alternate-exchange', broker: '', config: 'ae' }), /is the default exchange \(''\) on the broker/);
    assert.match(describeDifference('queue', 'q', { argument: 'x-queue-mode', broker: '', config: 'lazy' }), /is '' on the broker/);
    const failure = parsePreconditionFailure("PRECONDITION_FAILED - inequivalent arg 'x-dead-letter-exchange' for queue 'q' in vhost '/': received '' but current is none")!;
    assert.match(describePreconditionFailure(failure), /x-dead-letter-exchange is none on the broker, config says the default exchange \(''\)/);
  });

  it('says every difference of a queue in one sentence, and the way out once', () => {
    const diffs = diffArguments({ 'x-message-ttl': 3000 }, { 'x-message-ttl': 5000, 'x-max-length': 10 });
    assert.equal(
      describeDifferences('queue', 'r', diffs),
      "queue 'r': x-max-length is none on the broker, config says 10; x-message-ttl is 3000 on the broker, config says 5000" + wayOut('r'),
    );
    assert.equal(describeDifferences('exchange', 'e', [{ argument: 'alternate-exchange', broker: undefined, config: 'ae' }]), "exchange 'e': alternate-exchange is none on the broker, config says 'ae'");
  });
});

describe('a declare refused (406) for a queue', () => {
  const plan = planTopology(seed);
  const ttlRefused = Object.assign(new Error("PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'retry-queue' in vhost '/': received the value '3000' of type 'signedint' but current is the value '1000' of type 'signedint'"), { code: 406 });
  const channel = {
    assertExchange: () => Promise.resolve(),
    bindQueue: () => Promise.resolve(),
    assertQueue: (name: string) => (name === 'retry-queue' ? Promise.reject(ttlRefused) : Promise.resolve()),
  } as unknown as Channel;
  const run: ChannelRunner = (work) => work(channel);
  const refused = (reader?: DefinitionReader): Promise<string> => declareTopology(run, plan, reader).then(() => 'declared', (err: unknown) => (err as Error).message);

  it('with the management API: looks the queue up and says every difference', async () => {
    const reader: DefinitionReader = { queueArguments: () => Promise.resolve({ 'x-message-ttl': 1000, 'x-dead-letter-exchange': 'elsewhere' }), exchangeType: () => Promise.resolve(undefined) };
    assert.equal(
      await refused(reader),
      "queue 'retry-queue': x-dead-letter-exchange is 'elsewhere' on the broker, config says 'main-exchange'; x-message-ttl is 1000 on the broker, config says 3000" + wayOut('retry-queue'),
    );
  });

  it('without it (or when it does not answer): the broker\'s one difference, and that check mode lists them all', async () => {
    const single = "queue 'retry-queue': x-message-ttl is '1000' on the broker, config says '3000'" + wayOut('retry-queue') + '; ' + FIRST_DIFFERENCE_ONLY;
    assert.equal(await refused(), single);
    const down: DefinitionReader = { queueArguments: () => Promise.resolve(undefined), exchangeType: () => Promise.resolve(undefined), unavailable: () => Promise.resolve('management API did not answer') };
    assert.equal(await refused(down), single);
    assert.match(FIRST_DIFFERENCE_ONLY, /check mode with the management API URL set on the broker lists them all/);
  });
});

describe('406 PRECONDITION_FAILED texts', () => {
  // Texts recorded from RabbitMQ 3.10.8.
  const received = "Operation failed: QueueDeclare; 406 (PRECONDITION-FAILED) with message \"PRECONDITION_FAILED - inequivalent arg 'x-dead-letter-exchange' for queue 'main-queue' in vhost '/': received 'other' but current is 'retry-exchange'\"";
  const none = "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'retry-queue' in vhost '/': received none but current is the value '3000' of type 'short'";
  const type = "PRECONDITION_FAILED - inequivalent arg 'type' for exchange 'main-exchange' in vhost '/': received 'fanout' but current is 'direct'";

  it('reads both values', () => {
    const failure = parsePreconditionFailure(received);
    assert.deepEqual(failure, { kind: 'queue', name: 'main-queue', argument: 'x-dead-letter-exchange', received: 'other', current: 'retry-exchange' });
    assert.equal(describePreconditionFailure(failure), "queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says 'other'" + wayOut('main-queue'));
  });

  it('reads "none" and "the value ... of type"', () => {
    const failure = parsePreconditionFailure(none)!;
    assert.equal(describePreconditionFailure(failure), "queue 'retry-queue': x-message-ttl is '3000' on the broker, config says none" + wayOut('retry-queue'));
    assert.equal(describePreconditionFailure(parsePreconditionFailure(type)!), "exchange 'main-exchange': type is 'direct' on the broker, config says 'fanout'");
  });

  it('keeps what survives the broker truncating the text', () => {
    const truncated = none.slice(0, 90);
    assert.deepEqual(parsePreconditionFailure(truncated), { kind: 'queue', name: 'retry-queue', argument: 'x-message-ttl' });
    assert.equal(describePreconditionFailure(parsePreconditionFailure(truncated)!), "queue 'retry-queue': x-message-ttl is different on the broker, config says something else" + wayOut('retry-queue'));
    assert.equal(parsePreconditionFailure('PRECONDITION_FAILED - inequi'), null);
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

describe('argumentValueText (an argument value for the status line and the Check topology table)', () => {
  const words = { none: 'NONE', defaultExchange: 'DEFAULT' };
  it('says an unset argument with the caller\'s word for none', () => {
    assert.equal(argumentValueText(undefined, 'x-message-ttl', words), 'NONE');
  });
  it("says '' where an exchange is named as the default exchange, and '' elsewhere quoted", () => {
    assert.equal(argumentValueText('', 'x-dead-letter-exchange', words), 'DEFAULT');
    assert.equal(argumentValueText('', 'alternate-exchange', words), 'DEFAULT');
    assert.equal(argumentValueText('', 'x-dead-letter-routing-key', words), "''");
  });
  it('quotes a string and gives anything else as JSON', () => {
    assert.equal(argumentValueText('retry-exchange', 'x-dead-letter-exchange', words), "'retry-exchange'");
    assert.equal(argumentValueText(5000, 'x-message-ttl', words), '5000');
    assert.equal(argumentValueText(true, 'x-single-active-consumer', words), 'true');
  });
});
