import { strict as assert } from 'node:assert';
import { RedisDedupeStore } from '../../../src/lib/dedupe/redis-store';

// The Redis key of a record; the store is never connected (its client connects on prepare()).
describe('RedisDedupeStore.keyOf', () => {
  const stores: RedisDedupeStore[] = [];
  const store = (url: string, prefix?: string): RedisDedupeStore => {
    const s = new RedisDedupeStore({ url, prefix });
    stores.push(s);
    return s;
  };
  after(async () => {
    for (const s of stores) await s.close();
  });

  it('is <prefix><scope, URI-encoded>:<key> on one server', () => {
    const s = store('redis://127.0.0.1:6379', 'p:');
    assert.equal(s.keyOf({ scope: 'orders.main', key: 'm-1' }), 'p:orders.main:m-1');
    assert.equal(s.keyOf({ scope: 'a b/c', key: 'k:1' }), 'p:a%20b%2Fc:k:1');
  });

  it('follows the scope when it changes from one key to the next', () => {
    const s = store('redis://127.0.0.1:6379');
    const keys = ['q1', 'q2', 'q1', ''].map((scope, i) => s.keyOf({ scope, key: `k${i}` }));
    assert.deepEqual(keys, ['rabbitmq-retry:dedupe:q1:k0', 'rabbitmq-retry:dedupe:q2:k1', 'rabbitmq-retry:dedupe:q1:k2', 'rabbitmq-retry:dedupe::k3']);
  });

  it('makes the scope the hash tag in a cluster (% for an empty scope)', () => {
    const s = store('redis+cluster://127.0.0.1:7000,127.0.0.1:7001', 'p:');
    assert.equal(s.keyOf({ scope: 'orders', key: 'm-1' }), 'p:{orders}:m-1');
    assert.equal(s.keyOf({ scope: '', key: 'm-2' }), 'p:{%}:m-2');
    assert.equal(s.keyOf({ scope: 'orders', key: 'm-3' }), 'p:{orders}:m-3');
  });
});
