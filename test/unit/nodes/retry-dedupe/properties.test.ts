import assert from 'node:assert/strict';
import { DEDUPE_NUMBERS, DEFAULT_DEDUPE_TABLE, dedupeProperties } from '../../../../src/nodes/retry-dedupe/properties';

describe('retry-dedupe properties', function () {
  it('a node saved without its properties: a memory store, its numbers at their fallbacks, the local Redis and default table for the others', function () {
    assert.deepEqual(dedupeProperties({}), {
      kind: 'memory',
      numbers: { retentionHours: 24, leaseSeconds: 300, maxKeys: 100_000 },
      redis: { url: 'redis://127.0.0.1:6379', prefix: undefined, tlsConfig: '' },
      postgres: { id: '', table: DEFAULT_DEDUPE_TABLE, mode: 'declare' },
      problems: [],
    });
  });

  it('reads a Redis and a PostgreSQL store as set', function () {
    const redis = dedupeProperties({ kind: 'redis', url: ' rediss://cache:6380 ', prefix: 'app:', tlsConfig: 't1', retentionHours: '2' });
    assert.equal(redis.kind, 'redis');
    assert.deepEqual(redis.redis, { url: 'rediss://cache:6380', prefix: 'app:', tlsConfig: 't1' });
    assert.equal(redis.numbers.retentionHours, 2);
    const pg = dedupeProperties({ kind: 'postgres', postgres: 'pg1', table: 'keys', mode: 'check' });
    assert.deepEqual([pg.kind, pg.postgres], ['postgres', { id: 'pg1', table: 'keys', mode: 'check' }]);
  });

  it('a kind it does not know: no kind, and the problem after those of its numbers', function () {
    const read = dedupeProperties({ kind: 'mongo', maxKeys: '1.5' });
    assert.equal(read.kind, undefined);
    assert.equal(read.numbers.maxKeys, DEDUPE_NUMBERS.maxKeys.fallback);
    assert.equal(read.problems.length, 2);
    assert.match(read.problems[0] ?? '', /most keys in memory/);
    assert.equal(read.problems[1], "store kind 'mongo' is not one of memory, redis, postgres");
  });
});
