/** Pure parts of the stores: the memory store's bounds, batches, Redis URLs, PostgreSQL settings, errors and table names. */
import assert from 'node:assert/strict';
import { describeRedis, parseRedisUrl, redisPrefixProblem, redisUrlProblem } from '../../../src/lib/dedupe';

describe('Redis URLs', () => {
  it('names the server without credentials', () => {
    assert.equal(describeRedis('redis://user:secret@cache.local:6380/2'), 'redis cache.local:6380/2');
    assert.equal(describeRedis('rediss://cache.local'), 'rediss cache.local:6379');
  });
  it('says what is wrong with a URL', () => {
    assert.equal(redisUrlProblem('redis://127.0.0.1:6379/0'), undefined);
    assert.match(redisUrlProblem('http://x') ?? '', /must start with redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/ or redis\+cluster:\/\/, not http:\/\//);
    assert.match(redisUrlProblem('redis://x/abc') ?? '', /database number/);
    assert.match(redisUrlProblem('not a url') ?? '', /not a URL/);
  });
  it('reads a Sentinel URL: the sentinels (26379 by default), the master name, a database, the login', () => {
    assert.deepEqual(parseRedisUrl('redis+sentinel://10.0.0.1:26380,10.0.0.2/mymaster'), {
      mode: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26380 },
        { host: '10.0.0.2', port: 26379 },
      ],
      name: 'mymaster',
      db: 0,
    });
    assert.deepEqual(parseRedisUrl('redis+sentinel://app:p%40ss@[::1]:26379/orders%20cache/3'), {
      mode: 'sentinel',
      sentinels: [{ host: '::1', port: 26379 }],
      name: 'orders cache',
      db: 3,
      username: 'app',
      password: 'p@ss',
    });
    assert.deepEqual(parseRedisUrl('redis+sentinel://:secret@s1/m'), { mode: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], name: 'm', db: 0, password: 'secret' });
  });
  it('reads a Cluster URL: a few nodes (6379 by default), the login', () => {
    assert.deepEqual(parseRedisUrl('redis+cluster://10.0.0.1:7000, 10.0.0.2'), {
      mode: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
      ],
    });
    assert.deepEqual(parseRedisUrl('REDIS+CLUSTER://u:pw@n1:7001/'), { mode: 'cluster', nodes: [{ host: 'n1', port: 7001 }], username: 'u', password: 'pw' });
  });
  it('keeps a one-server URL as it is', () => {
    assert.deepEqual(parseRedisUrl('redis://u:pw@cache:6380/2'), { mode: 'single', url: 'redis://u:pw@cache:6380/2' });
  });
  it('says what is wrong with a Sentinel or Cluster URL, case by case', () => {
    const problem = (url: string): string => redisUrlProblem(url) ?? '';
    assert.match(problem('redis+sentinel://s1:26379'), /must name the master after the sentinels/);
    assert.match(problem('redis+sentinel://s1:26379/'), /must name the master/);
    assert.match(problem('redis+sentinel://s1/m/x'), /\/masterName or \/masterName\/db/);
    assert.match(problem('redis+sentinel://s1/m/0/1'), /\/masterName or \/masterName\/db/);
    assert.match(problem('redis+sentinel://s1,,s2/m'), /'' is not host or host:port/);
    assert.match(problem('redis+sentinel:///m'), /'' is not host or host:port/);
    assert.match(problem('redis+sentinel://s1:99999/m'), /'s1:99999' is not host or host:port/);
    assert.match(problem('redis+sentinel://s1:0/m'), /'s1:0' is not host or host:port/);
    assert.match(problem('redis+sentinel://s1/m?db=1'), /no \?options/);
    assert.match(problem('redis+cluster://n1:7000/0'), /a cluster has no databases/);
    assert.match(problem('redis+cluster://n1:abc'), /'n1:abc' is not host or host:port/);
    assert.match(problem('rediss+cluster://n1'), /TLS \(rediss\+cluster:\/\/\) is not supported/);
    assert.match(problem('rediss+sentinel://s1/m'), /use redis\+sentinel:\/\//);
    for (const ok of ['redis+sentinel://s1/m', 'redis+sentinel://s1:1,s2:2,s3:3/m/15', 'redis+cluster://n1', 'redis+cluster://a-b.c_d:7000,[fe80::1]:7001']) assert.equal(redisUrlProblem(ok), undefined, ok);
  });
  it('names a Sentinel or Cluster store without credentials', () => {
    assert.equal(describeRedis('redis+sentinel://u:secret@10.0.0.1:26379,10.0.0.2:26380/mymaster/2'), 'redis sentinel mymaster/2 (10.0.0.1:26379,10.0.0.2:26380)');
    assert.equal(describeRedis('redis+cluster://u:secret@n1:7000,[::1]'), 'redis cluster n1:7000,[::1]:6379');
  });
  it('a key prefix with a brace cannot be used with a cluster (the scope is the hash tag); elsewhere it can', () => {
    assert.match(redisPrefixProblem('redis+cluster://n1', 'app:{x}:') ?? '', /has a \{ or \}/);
    assert.equal(redisPrefixProblem('redis+cluster://n1', 'app:dedupe:'), undefined);
    assert.equal(redisPrefixProblem('redis://n1', 'app:{x}:'), undefined);
    assert.equal(redisPrefixProblem('redis+sentinel://s1/m', 'app:{x}:'), undefined);
  });
});
