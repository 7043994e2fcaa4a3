import assert from 'node:assert/strict';
import {
  describeDifference,
  describePreconditionFailure,
  diffArguments,
  parsePreconditionFailure,
  parseQueueArguments,
  planTopology,
  validateTopologyConfig,
  type RetryTopologyConfig,
} from '../../src/lib/topology';

const seed: RetryTopologyConfig = {
  mode: 'declare',
  mainExchange: 'main-exchange',
  mainExchangeType: 'direct',
  mainQueue: 'main-queue',
  routingKeys: ['srvc.transact.cash'],
  retryExchange: 'retry-exchange',
  retryExchangeType: 'fanout',
  retryQueue: 'retry-queue',
  retryDelayMs: 3000,
  parkingQueue: 'parking-queue',
  maxAttempts: 3,
  mainQueueArguments: {},
  retryQueueArguments: {},
  parkingQueueArguments: {},
};

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
    const args = parseQueueArguments('{"x-queue-type":"quorum","x-delivery-limit":50}', 'main');
    assert.deepEqual(args, { 'x-queue-type': 'quorum', 'x-delivery-limit': 50 });
    const plan = planTopology({ ...seed, mainQueueArguments: args });
    assert.deepEqual(plan.queues[0]?.arguments, { 'x-queue-type': 'quorum', 'x-delivery-limit': 50, 'x-dead-letter-exchange': 'retry-exchange' });
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
      retryDelayMs: -1,
      retryExchange: 'main-exchange',
      mainQueueArguments: { 'x-dead-letter-exchange': 'elsewhere' },
    });
    assert.ok(problems.some((p) => p.includes("'amq.q'")));
    assert.ok(problems.some((p) => p.includes('different names')));
    assert.ok(problems.some((p) => p.includes('max attempts')));
    assert.ok(problems.some((p) => p.includes('retry delay')));
    assert.ok(problems.some((p) => p.includes('retry exchange must differ')));
    assert.ok(problems.some((p) => p.includes('x-dead-letter-exchange is set by the retry topology')));
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
      "queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says none",
    );
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
    assert.equal(describePreconditionFailure(failure), "queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says 'other'");
  });

  it('reads "none" and "the value ... of type"', () => {
    const failure = parsePreconditionFailure(none)!;
    assert.equal(describePreconditionFailure(failure), "queue 'retry-queue': x-message-ttl is '3000' on the broker, config says none");
    assert.equal(describePreconditionFailure(parsePreconditionFailure(type)!), "exchange 'main-exchange': type is 'direct' on the broker, config says 'fanout'");
  });

  it('keeps what survives the broker truncating the text', () => {
    const truncated = none.slice(0, 90);
    assert.deepEqual(parsePreconditionFailure(truncated), { kind: 'queue', name: 'retry-queue', argument: 'x-message-ttl' });
    assert.equal(describePreconditionFailure(parsePreconditionFailure(truncated)!), "queue 'retry-queue': x-message-ttl is different on the broker, config says something else");
    assert.equal(parsePreconditionFailure('PRECONDITION_FAILED - inequi'), null);
  });
});
