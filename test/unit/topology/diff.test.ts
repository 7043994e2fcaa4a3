import assert from 'node:assert/strict';
import { argumentValueText, describeDifference, describeDifferences, describePreconditionFailure, diffArguments, parsePreconditionFailure } from '../../../src/lib/topology/diff';

/** The way out of a queue whose arguments differ, as the sentences end. */
const wayOut = (queue: string): string =>
  ` (a queue's arguments cannot be changed: move its messages elsewhere, delete '${queue}' and redeploy, or use another queue name; see "Mismatches" in the topology guide)`;

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
