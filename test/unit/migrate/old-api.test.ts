/** Issue 52: function nodes calling the old packages' msg API, each named with what to change. */
import assert from 'node:assert/strict';
import { oldApiNotes } from '../../../src/migrate/old-api';

const fn = (func: string, extra: Record<string, unknown> = {}): Parameters<typeof oldApiNotes>[0] => ({ id: 'f', type: 'function', func, ...extra });

describe('old msg API in function nodes', function () {
  it('ackMsg → a retry-settle (ack); nackMsg / rejectMsg → retry or park', function () {
    assert.deepEqual(oldApiNotes(fn('msg.amqpMessage.ackMsg(); return msg;')), ['msg.amqpMessage.ackMsg() is gone: send the msg to a retry-settle (ack) instead']);
    for (const call of ['nackMsg(true)', 'rejectMsg()']) assert.match(oldApiNotes(fn(`msg.amqpMessage.${call};`)).join(), /retry-settle \(retry\), or a park-publisher/, call);
  });

  it('other uses of msg.amqpMessage: read msg.amqp and msg.payload', function () {
    assert.deepEqual(oldApiNotes(fn('const key = msg.amqpMessage.fields.routingKey;')), ['msg.amqpMessage is gone: read msg.payload and msg.amqp (properties, headers, routing key)']);
  });

  it('msg.manualAck, in the code on message or on start', function () {
    assert.match(oldApiNotes(fn('', { initialize: 'context.set("m", { manualAck: 1 })' })).join(), /msg\.manualAck only settles on the wire back/);
  });

  it('nothing for a function without them, or another node type', function () {
    assert.deepEqual(oldApiNotes(fn('return msg;')), []);
    assert.deepEqual(oldApiNotes({ id: 't', type: 'template', template: 'msg.amqpMessage' }), []);
  });
});
