/** The msg a delivery becomes: its retry info on msg.retry and, for the settle, on msg.amqp.retry. */
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import { deliveredOf } from '../../../../src/lib/consume/delivered';
import { retryInfo } from '../../../../src/lib/message';
import { toMsg } from '../../../../src/nodes/retry-consumer/delivered-msg';

function consumed(headers: Record<string, unknown>): ConsumeMessage {
  return {
    content: Buffer.from('{"n":1}'),
    fields: { exchange: 'orders', routingKey: 'order.created', deliveryTag: 7, redelivered: false, consumerTag: 'ctag' },
    properties: { contentType: 'application/json', headers },
  } as unknown as ConsumeMessage;
}

describe('toMsg: the msg a delivery becomes', () => {
  it('puts the retry info on msg.retry and on msg.amqp.retry, one object (core nodes write msg.retry, never msg.amqp)', () => {
    const headers = { 'retry-attempt': 1 };
    const { delivered } = deliveredOf('c:7', consumed(headers), retryInfo(headers, 'orders-queue', 3), { configId: 'cfg', mainQueue: 'orders-queue', decode: 'auto' });
    const msg = toMsg(delivered);
    assert.deepEqual(msg.payload, { n: 1 });
    const amqp = msg.amqp as { retry: unknown; deliveryId: string };
    assert.equal(amqp.deliveryId, 'c:7');
    assert.equal(amqp.retry, msg.retry);
    assert.deepEqual(msg.retry, { attempt: 2, maxAttempts: 3, remaining: 1, firstDeathReason: null, deaths: [] });
    // What the http request node does to every msg it answers: the attempt is still on msg.amqp.
    msg.retry = 0;
    assert.equal((amqp.retry as { attempt: number }).attempt, 2);
  });
});
