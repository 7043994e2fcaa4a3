/** Pure parts of the stores: the memory store's bounds, batches, Redis URLs, PostgreSQL settings, errors and table names. */
import assert from 'node:assert/strict';
import { describeRedis, MemoryDedupeStore, parseRedisUrl, redisPrefixProblem, redisUrlProblem } from '../../src/lib/dedupe';
import { distinctKeys, distinctNames } from '../../src/lib/dedupe/batch';
import { describeDatabase, parseConnectionString, parseTableName, poolConfig, postgresProblem } from '../../src/lib/postgres';

const k = (key: string, scope = 'q'): { scope: string; key: string } => ({ scope, key });

describe('memory deduplication store', () => {
  it('keeps at most maxKeys records, dropping the oldest done ones first and never a live claim', async () => {
    let now = 1000;
    const store = new MemoryDedupeStore({ maxKeys: 3, now: () => now });
    await store.claim([k('claim-1')], 'A', 60_000);
    await store.complete([k('done-1'), k('done-2')], 60_000);
    await store.complete([k('done-3')], 60_000);
    assert.equal(store.size, 3);
    assert.deepEqual(await store.claim([k('done-1')], 'B', 60_000), [{ state: 'claimed' }], 'the oldest done key was dropped');
    const [held] = await store.claim([k('claim-1')], 'B', 60_000);
    assert.equal(held?.state, 'held', 'the live claim stayed');
    now += 61_000;
    assert.deepEqual(await store.claim([k('claim-1')], 'B', 60_000), [{ state: 'claimed' }], 'an ended lease is free');
  });

  it('over the bound for long (the sweep goes on where it stopped): the newest done keys kept, live claims never dropped', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ maxKeys: 100, now: () => now });
    store.claimOne(k('live'), 'A', 1e9);
    for (let i = 0; i < 5000; i += 1) {
      store.claimOne(k(`m-${i}`), 'A', 1000);
      store.completeOne(k(`m-${i}`), 1e6);
      if (i % 7 === 0) store.releaseOne(k(`m-${i - 3}`), 'A'); // done already: stays
    }
    assert.equal(store.size, 100);
    assert.equal(store.claimOne(k('live'), 'B', 1000).state, 'held');
    assert.equal(store.claimOne(k('m-4999'), 'B', 1000).state, 'done');
    assert.equal(store.claimOne(k('m-4901'), 'B', 1000).state, 'done');
    assert.equal(store.claimOne(k('m-10'), 'B', 1000).state, 'claimed', 'an old one was dropped');
    now = 2e6; // every done key expired: swept as records are written
    for (let i = 0; i < 300; i += 1) store.releaseOne(k(`x-${i}`), 'A');
    for (let i = 0; i < 300; i += 1) store.completeOne(k(`n-${i}`), 1);
    assert.ok(store.size <= 100);
    assert.equal(store.claimOne(k('live'), 'B', 1000).state, 'held', 'the live claim outlived them all');
  });

  it('forgets a done key after its retention', async () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    await store.complete([k('x')], 1000);
    assert.deepEqual(await store.claim([k('x')], 'A', 10), [{ state: 'done' }]);
    now = 1001;
    assert.deepEqual(await store.claim([k('x')], 'A', 10), [{ state: 'claimed' }]);
  });

  it('a key done again is the youngest: the bound drops an older one first, and the later retention counts', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ maxKeys: 2, now: () => now });
    store.completeOne(k('x'), 1000);
    store.completeOne(k('y'), 1000);
    now = 900;
    store.completeOne(k('x'), 1000); // a copy completed after all: x is kept until 1 900
    store.completeOne(k('z'), 1000); // over the bound: y, now the oldest, goes
    // Two records, x and z both done: y was the one dropped.
    assert.equal(store.size, 2);
    assert.equal(store.claimOne(k('z'), 'A', 10).state, 'done');
    now = 1500;
    assert.equal(store.claimOne(k('x'), 'A', 10).state, 'done', 'x kept until its later retention ends');
    now = 1901;
    assert.equal(store.claimOne(k('x'), 'A', 10).state, 'claimed');
  });

  it('a claim whose lease ended unsettled is swept as records are written, and is free meanwhile', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    store.claimOne(k('stuck'), 'A', 100);
    now = 101;
    assert.equal(store.claimOne(k('stuck'), 'B', 100).state, 'claimed', 'an ended lease is free');
    now = 202;
    for (let i = 0; i < 256; i += 1) store.completeOne(k(`m-${i}`), 1e6);
    assert.equal(store.size, 256, "B's ended claim swept, the done keys kept");
  });

  it('a key with a colon is not confused with another scope', async () => {
    const store = new MemoryDedupeStore();
    await store.complete([k('b:c', 'a')], 1000);
    assert.deepEqual(await store.claim([k('c', 'a:b')], 'A', 10), [{ state: 'claimed' }]);
  });
});

describe('store batches', () => {
  it('asks each key once and maps the answers back', () => {
    const { unique, at } = distinctKeys([k('a'), k('b'), k('a'), k('a', 'other')]);
    assert.deepEqual(unique, [k('a'), k('b'), k('a', 'other')]);
    assert.deepEqual(at, [0, 1, 0, 2]);
    const again = distinctKeys([k('a'), k('b'), k('a')]);
    assert.deepEqual(again, { unique: [k('a'), k('b')], at: [0, 1, 0] }, 'one scope, a key twice');
  });

  it('a batch of distinct keys: the same list, nothing to map back (one scope or several)', () => {
    const keys = [k('a'), k('b'), k('a', 'other')];
    const all = distinctKeys(keys);
    assert.equal(all.unique, keys);
    assert.equal(all.at, undefined);
    const one = [k('a'), k('b')];
    assert.equal(distinctKeys(one).unique, one);
    assert.equal(distinctKeys(one).at, undefined);
    assert.deepEqual(distinctKeys([]), { unique: [], at: undefined });
  });

  it('names made strings: each asked once, answers mapped back only when some came twice', () => {
    assert.deepEqual(distinctNames(['a', 'b', 'a', 'c']), { unique: ['a', 'b', 'c'], at: [0, 1, 0, 2] });
    const names = ['a', 'b'];
    const all = distinctNames(names);
    assert.equal(all.unique, names, 'all distinct: the same list, nothing to map back');
    assert.equal(all.at, undefined);
    assert.deepEqual(distinctNames([]), { unique: [], at: undefined });
  });
});

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

describe('PostgreSQL settings', () => {
  it('names the database without the password', () => {
    assert.equal(describeDatabase({ connectionString: 'postgres://app:secret@db:5433/orders' }), 'app@db:5433/orders');
    assert.equal(describeDatabase({ host: 'db', user: 'app', database: 'orders' }), 'app@db:5432/orders');
  });
  it('puts a separately given user and password into the connection string (pg lets the string win)', () => {
    const config = poolConfig({ connectionString: 'postgres://db:5432/orders?sslmode=require', user: 'app', password: 'p@ss/word' });
    const url = new URL(config.connectionString!);
    assert.equal(decodeURIComponent(url.username), 'app');
    assert.equal(decodeURIComponent(url.password), 'p@ss/word');
    assert.equal(url.searchParams.get('sslmode'), 'require');
  });
  it('refuses what is not a postgres URL', () => {
    assert.deepEqual(parseConnectionString('mysql://x/y'), { problem: 'database URL must start with postgres:// or postgresql://, not mysql://' });
    assert.ok('problem' in parseConnectionString('::'));
  });
  it('tells an unreachable database, a refused login and a missing table apart', () => {
    assert.equal(postgresProblem({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }), 'unreachable');
    assert.equal(postgresProblem({ code: '28P01', message: 'password authentication failed' }), 'auth');
    assert.equal(postgresProblem({ code: '42P01', message: 'relation "x" does not exist' }), 'schema');
    assert.equal(postgresProblem({ code: '23505', message: 'duplicate key' }), 'other');
    assert.equal(postgresProblem(new Error('Connection terminated unexpectedly')), 'unreachable');
  });
  it('takes table names of plain identifiers only, quoted for SQL and plain for people', () => {
    assert.deepEqual(parseTableName('app.outbox'), { schema: 'app', table: 'outbox', sql: '"app"."outbox"', display: 'app.outbox' });
    assert.deepEqual(parseTableName('outbox'), { schema: undefined, table: 'outbox', sql: '"outbox"', display: 'outbox' });
    assert.ok('problem' in parseTableName('outbox; DROP TABLE x'));
    assert.ok('problem' in parseTableName('a.b.c'));
  });
});
