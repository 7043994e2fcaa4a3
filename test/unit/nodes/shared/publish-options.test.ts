import assert from 'node:assert/strict';
import { publishOptions, publishTarget, publishTrace, type PublishSettings } from '../../../../src/nodes/shared/publish-options';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const NEW = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('publish options', () => {
  const publish: PublishSettings = { mode: 'publish', exchange: 'main-exchange', routingKey: '', persistent: true, contentType: '' };
  const reply: PublishSettings = { ...publish, mode: 'reply', exchange: '' };
  const consumed = { amqp: { properties: { replyTo: 'reply-queue', correlationId: 'c-7' } } };

  it('keeps the consumed message\'s ids and own headers when asked, unless the msg sets its own', () => {
    const delivered = {
      payload: {},
      amqp: {
        properties: { messageId: 'pay-1', correlationId: 'c-1', contentType: 'application/json', replyTo: 'r' },
        headers: { tenant: 'acme', 'x-death': [{}], 'x-first-death-reason': 'rejected', 'retry-attempt': 2, 'park-reason': 'x' },
      },
    };
    const keep = { ...publish, keepIds: true };
    const options = publishOptions(keep, delivered, 'application/json', () => 'new-id', () => 1_000_000, () => NEW);
    assert.equal(options.messageId, 'pay-1');
    assert.equal(options.correlationId, 'c-1');
    assert.deepEqual(options.headers, { tenant: 'acme', traceparent: NEW }, 'not the broker\'s x- headers nor the retry / park bookkeeping');
    assert.equal(options.replyTo, undefined, 'only the ids, not where to reply');
    const own = publishOptions(keep, { ...delivered, properties: { messageId: 'mine' } }, undefined, () => 'new-id');
    assert.equal(own.messageId, 'mine');
    assert.equal(publishOptions(publish, delivered, undefined, () => 'new-id').messageId, 'new-id', 'off by default');
  });

  it('routes by the node, else msg.topic; refuses a publish with nowhere to go', () => {
    assert.deepEqual(publishTarget({ ...publish, routingKey: 'rk' }, { topic: 'other' }), { exchange: 'main-exchange', routingKey: 'rk' });
    assert.deepEqual(publishTarget(publish, { topic: 'from-msg' }), { exchange: 'main-exchange', routingKey: 'from-msg' });
    assert.throws(() => publishTarget({ ...publish, exchange: '' }, {}), /no routing key/);
  });

  it('replies on the default exchange to replyTo, with the same correlationId', () => {
    assert.deepEqual(publishTarget(reply, consumed), { exchange: '', routingKey: 'reply-queue' });
    assert.equal(publishOptions(reply, consumed, 'application/json', () => 'id').correlationId, 'c-7');
    assert.throws(() => publishTarget(reply, { amqp: { properties: {} } }), /replyTo is missing/);
  });

  describe('a batch msg (a retry consumer in batch mode)', () => {
    const items = [{ deliveryId: 'd0', properties: { replyTo: 'r0', messageId: 'm0' } }, { deliveryId: 'd1', properties: { replyTo: 'r1', messageId: 'm1' } }];
    const batch = { payload: [1, 2], amqp: { config: 'cfg', queue: 'q', batch: { id: 'b', size: 2, split: 0 }, items } };
    it('a reply is refused: each item has its own replyTo', () => {
      assert.throws(() => publishTarget(reply, batch), /^Error: reply: this msg is a batch of 2 items, each with its own replyTo/);
    });
    it('keep the consumed ids is refused: each item has its own', () => {
      assert.throws(() => publishOptions({ ...publish, keepIds: true }, batch, undefined, () => 'id'), /keep the consumed ids: this msg is a batch of 2 items, each with its own ids/);
    });
    it('a publish without keeping ids goes as any msg', () => {
      assert.deepEqual(publishTarget(publish, { ...batch, topic: 'rk' }), { exchange: 'main-exchange', routingKey: 'rk' });
      assert.equal(publishOptions(publish, batch, undefined, () => 'id').messageId, 'id');
    });
  });

  it('takes msg.properties, fills in content type, message id and timestamp, always mandatory', () => {
    const options = publishOptions(publish, { properties: { correlationId: 'x', headers: { h: 1 }, bogus: true } }, 'application/json', () => 'generated', () => 1_700_000_000_999, () => NEW);
    assert.deepEqual(options, {
      persistent: true,
      correlationId: 'x',
      headers: { h: 1, traceparent: NEW },
      contentType: 'application/json',
      messageId: 'generated',
      timestamp: 1_700_000_000,
      mandatory: true,
    });
  });

  it('keeps what the msg or the node set', () => {
    const options = publishOptions({ ...publish, contentType: 'text/csv', persistent: false }, { properties: { messageId: 'm', timestamp: 5 } }, 'text/plain', () => 'unused');
    assert.equal(options.contentType, 'text/csv');
    assert.equal(options.messageId, 'm');
    assert.equal(options.timestamp, 5);
    assert.equal(options.persistent, false);
  });

  describe('trace context', () => {
    it('sends msg.traceparent and msg.tracestate', () => {
      const options = publishOptions(publish, { traceparent: TP, tracestate: 'a=1', properties: { headers: { h: 1 } } }, undefined, () => 'id', Date.now, () => NEW);
      assert.deepEqual(options.headers, { h: 1, traceparent: TP, tracestate: 'a=1' });
    });

    it('drops an invalid msg.tracestate, and a tracestate of headers that go with another traceparent', () => {
      assert.deepEqual(publishTrace({ traceparent: TP, tracestate: 'Bad Key=1' }, undefined), { traceparent: TP });
      const headers = { traceparent: NEW, tracestate: 'other=1' };
      assert.deepEqual(publishOptions(publish, { traceparent: TP, properties: { headers } }, undefined, () => 'id').headers, { traceparent: TP });
    });

    it('keeps the traceparent of the headers (msg.properties or the kept ones) when the msg has none, or an invalid one', () => {
      const headers = { traceparent: TP, tracestate: 'a=1' };
      assert.deepEqual(publishOptions(publish, { properties: { headers } }, undefined, () => 'id', Date.now, () => NEW).headers, headers);
      assert.deepEqual(publishTrace({ traceparent: 'nonsense' }, headers, () => NEW), headers);
      const kept = publishOptions({ ...publish, keepIds: true }, { amqp: { headers: { traceparent: TP } } }, undefined, () => 'id', Date.now, () => NEW);
      assert.deepEqual(kept.headers, { traceparent: TP });
      const overridden = publishOptions({ ...publish, keepIds: true }, { traceparent: NEW, amqp: { headers: { traceparent: TP } } }, undefined, () => 'id');
      assert.deepEqual(overridden.headers, { traceparent: NEW }, 'msg.traceparent (the consumer\'s span) before the consumed header');
    });

    it('starts a new trace for a msg without one, and never touches the msg\'s own headers object', () => {
      const headers = { h: 1 };
      const options = publishOptions(publish, { properties: { headers } }, undefined, () => 'id');
      assert.deepEqual(headers, { h: 1 });
      assert.match(String((options.headers as Record<string, unknown>).traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    });

    it('a reply carries the msg\'s trace context (the consumer\'s), not a new one', () => {
      assert.deepEqual(publishOptions(reply, { ...consumed, traceparent: TP }, undefined, () => 'id', Date.now, () => NEW).headers, { traceparent: TP });
    });

    it('leaves headers that are not an object for the publish check to name', () => {
      assert.equal(publishOptions(publish, { properties: { headers: 'nope' } }, undefined, () => 'id').headers, 'nope');
    });
  });
});
