/** msg.amqp.properties: the written-out consumedProperties() against the list it stands for. */
import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { CONSUMED_PROPERTY_KEYS, consumedProperties, pickDefined } from '../../../src/lib/message/message-info';

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
