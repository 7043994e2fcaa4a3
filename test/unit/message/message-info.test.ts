/** msg.amqp.properties: the written-out consumedProperties() against the list it stands for; msg.amqp.retry. */
import assert from 'node:assert/strict';
import type { ConsumeMessage, MessageProperties } from 'amqplib';
import { retryInfo } from '../../../src/lib/message/attempts';
import { CONSUMED_PROPERTY_KEYS, consumedProperties, pickDefined, toAmqpInfo } from '../../../src/lib/message/message-info';

/** amqplib's shape: every property present, unset ones undefined. */
function properties(set: Partial<MessageProperties>): MessageProperties {
  const all = Object.fromEntries([...CONSUMED_PROPERTY_KEYS, 'headers'].map((key) => [key, undefined]));
  return { ...all, ...set } as MessageProperties;
}

describe('consumedProperties (msg.amqp.properties)', () => {
  it('reads exactly the properties of CONSUMED_PROPERTY_KEYS, headers excluded', () => {
    const read = new Set<string | symbol>();
    const spy = new Proxy(properties({}), {
      get(target, key, receiver) {
        read.add(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    consumedProperties(spy);
    assert.deepEqual([...read].sort(), [...CONSUMED_PROPERTY_KEYS].sort());
  });

  it('keeps what is set and leaves out undefined and null, as pickDefined does', () => {
    const cases: Array<Partial<MessageProperties>> = [
      {},
      { contentType: 'application/json', deliveryMode: 2, messageId: 'm-1', timestamp: 1714564800, headers: { a: 1 } },
      Object.fromEntries(CONSUMED_PROPERTY_KEYS.map((key, i) => [key, `v${i}`])),
      { priority: 0, correlationId: '', replyTo: null, expiration: undefined, appId: 'app' },
    ];
    for (const set of cases) {
      const p = properties(set);
      assert.deepEqual(consumedProperties(p), pickDefined(p, CONSUMED_PROPERTY_KEYS), JSON.stringify(set));
    }
    assert.deepEqual(consumedProperties(properties({ priority: 0, correlationId: '' })), { priority: 0, correlationId: '' }, '0 and empty text are values');
  });
});

describe('toAmqpInfo (msg.amqp)', () => {
  it("carries the delivery's retry info as msg.amqp.retry, where no core node writes (the http request node sets msg.retry = 0)", () => {
    const headers = { 'retry-attempt': 2 };
    const retry = retryInfo(headers, 'main-queue', 5);
    const message = { content: Buffer.alloc(0), fields: { exchange: 'ex', routingKey: 'rk', deliveryTag: 1, redelivered: false, consumerTag: 't' }, properties: properties({ headers }) } as unknown as ConsumeMessage;
    const info = toAmqpInfo('c:1', 'cfg', 'main-queue', message, retry);
    assert.equal(info.retry, retry, 'the same object as msg.retry: nothing more to build per delivery');
    assert.deepEqual([info.retry.attempt, info.retry.maxAttempts, info.retry.remaining], [3, 5, 2]);
  });
});
