import { strict as assert } from 'node:assert';
import { answers } from '../../../src/lib/dedupe/redis-scripts';
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

// The Redis claim script's reply: a letter per distinct key, with held keys an array of the letters and their details.
describe('Redis claim answers', () => {
  it('reads a letter per key: claimed and done', () => {
    assert.deepEqual(answers('cdc', undefined), [{ state: 'claimed' }, { state: 'done' }, { state: 'claimed' }]);
    assert.deepEqual(answers('', undefined), []);
  });

  it('reads each held key its details in order (an owner may hold colons)', () => {
    const before = Date.now();
    const results = answers(['chdh', '5000:host/1/ab', '20:a:b'], undefined);
    assert.deepEqual(
      results.map((r) => r.state),
      ['claimed', 'held', 'done', 'held'],
    );
    const [, first, , second] = results;
    assert.equal(first?.state === 'held' && first.owner, 'host/1/ab');
    assert.ok(first?.state === 'held' && first.until >= before + 5000 && first.until <= Date.now() + 5000);
    assert.equal(second?.state === 'held' && second.owner, 'a:b');
    assert.ok(second?.state === 'held' && second.until >= before + 20);
  });

  it('a held key whose lease is already over is held until now, not before', () => {
    const before = Date.now();
    const [held] = answers(['h', '-2:x'], undefined);
    assert.ok(held?.state === 'held' && held.until >= before && held.until <= Date.now());
  });

  it('maps the answers back to keys asked twice', () => {
    assert.deepEqual(
      answers('cd', [0, 1, 0]).map((r) => r.state),
      ['claimed', 'done', 'claimed'],
    );
  });
});
