import assert from 'node:assert/strict';
import { publishOptions, publishTarget, type PublishSettings } from '../../src/nodes/shared/publish-options';

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
    const options = publishOptions(keep, delivered, 'application/json', () => 'new-id', () => 1_000_000);
    assert.equal(options.messageId, 'pay-1');
    assert.equal(options.correlationId, 'c-1');
    assert.deepEqual(options.headers, { tenant: 'acme' }, 'not the broker\'s x- headers nor the retry / park bookkeeping');
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

  it('takes msg.properties, fills in content type, message id and timestamp, always mandatory', () => {
    const options = publishOptions(publish, { properties: { correlationId: 'x', headers: { h: 1 }, bogus: true } }, 'application/json', () => 'generated', () => 1_700_000_000_999);
    assert.deepEqual(options, {
      persistent: true,
      correlationId: 'x',
      headers: { h: 1 },
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
});
