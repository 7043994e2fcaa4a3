import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { clampReason, parkedPublishOptions, PARK_HEADERS, retryPublishOptions, withoutBrokerCounts } from '../../../src/lib/message/copies';

describe('parked message', () => {
  const properties = {
    contentType: 'application/json',
    correlationId: 'c-1',
    replyTo: 'reply-queue',
    messageId: 'm-1',
    expiration: '60000',
    userId: 'guest',
    deliveryMode: 1,
    headers: {
      custom: 'kept',
      'x-death': [{ queue: 'main-queue', reason: 'rejected', count: 2, exchange: 'main-exchange', 'routing-keys': ['srvc.transact.cash'] }],
    },
  } as unknown as MessageProperties;

  const options = parkedPublishOptions({
    content: Buffer.from('{}'),
    properties,
    fields: { exchange: 'main-exchange', routingKey: 'srvc.transact.cash' },
    mainQueue: 'main-queue',
    attempts: 3,
    reason: 'max attempts (3) reached',
    now: new Date('2026-11-22T10:00:00Z'),
  });

  it('keeps the original properties and headers, persistent and mandatory', () => {
    assert.equal(options.contentType, 'application/json');
    assert.equal(options.correlationId, 'c-1');
    assert.equal(options.replyTo, 'reply-queue');
    assert.equal(options.messageId, 'm-1');
    assert.equal(options.persistent, true);
    assert.equal(options.mandatory, true);
    assert.equal(options.headers?.custom, 'kept');
    assert.ok(Array.isArray(options.headers?.['x-death']));
  });

  it('drops expiration and user-id', () => {
    assert.equal(options.expiration, undefined);
    assert.equal(options.userId, undefined);
  });

  it('adds the failure headers', () => {
    assert.deepEqual(
      {
        reason: options.headers?.[PARK_HEADERS.reason],
        time: options.headers?.[PARK_HEADERS.time],
        exchange: options.headers?.[PARK_HEADERS.originalExchange],
        routingKey: options.headers?.[PARK_HEADERS.originalRoutingKey],
        queue: options.headers?.[PARK_HEADERS.originalQueue],
        attempt: options.headers?.[PARK_HEADERS.attempt],
      },
      { reason: 'max attempts (3) reached', time: '2026-11-22T10:00:00.000Z', exchange: 'main-exchange', routingKey: 'srvc.transact.cash', queue: 'main-queue', attempt: 3 },
    );
  });

  it('keeps reasons readable and bounded', () => {
    assert.equal(clampReason('  '), 'parked by the flow');
    assert.equal(clampReason('x'.repeat(2000)).length, 1000);
  });

  it('gives a retried copy the attempt, first-seen and original-route headers, keeping persistence as it was', () => {
    const retried = retryPublishOptions(properties, 2, 1234, { exchange: 'orders', routingKey: 'orders.cancelled' });
    assert.equal(retried.headers?.['retry-attempt'], 2);
    assert.equal(retried.headers?.['retry-first-seen'], 1234);
    assert.equal(retried.headers?.['retry-original-exchange'], 'orders');
    assert.equal(retried.headers?.['retry-original-routing-key'], 'orders.cancelled');
    assert.equal(retried.headers?.custom, 'kept');
    assert.equal(retried.persistent, false);
    assert.equal(retried.mandatory, true);
    assert.equal(retried.expiration, undefined);
  });

  it('a copy leaves out the counts the quorum queue wrote on the delivery (they are that queue\'s, of that stay)', () => {
    const counted = { ...properties, headers: { ...properties.headers, 'x-delivery-count': 2, 'x-acquired-count': 5 } };
    for (const copy of [retryPublishOptions(counted, 1, 1, { exchange: 'e', routingKey: 'k' }), parkedPublishOptions({ content: Buffer.alloc(0), properties: counted, fields: { exchange: 'e', routingKey: 'k' }, mainQueue: 'q', attempts: 1, reason: 'r', now: new Date(0) })]) {
      assert.equal(copy.headers?.['x-delivery-count'], undefined);
      assert.equal(copy.headers?.['x-acquired-count'], undefined);
      assert.equal(copy.headers?.custom, 'kept');
    }
    assert.deepEqual(withoutBrokerCounts({ a: 1 }), { a: 1 }, 'nothing to leave out: the same headers');
    assert.deepEqual(withoutBrokerCounts({ 'x-delivery-count': 0 }), {}, "RabbitMQ 3.10's 0 of a first delivery too");
  });
});
