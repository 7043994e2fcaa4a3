/**
 * The deduplication stores on the real services: the same contract for memory, Redis and PostgreSQL
 * (claim with a lease, done, held, released, batches), and each store's own failures named in words a
 * user can act on (wrong password, nothing listening, a table that is not as expected).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DedupeGate, DedupeStoreError, PostgresDedupeStore, RedisDedupeStore, type DedupeKey, type DedupeStore } from '../../src/lib/dedupe';
import { parseTableName, PostgresDatabase } from '../../src/lib/postgres';
import { canStartPrivatePostgres, canStartPrivateRedis, DATABASE_URL, NO_PRIVATE_POSTGRES, NO_PRIVATE_REDIS, startPrivatePostgres, startPrivateRedis } from '../helpers/private-stores';
import { skipBecause } from '../helpers/skips';
import { sharedStoreSubjects } from '../helpers/dedupe-subjects';
import { waitFor } from '../helpers/broker';
import { ask, canCreateCluster, NO_REDIS_CLI, startPrivateCluster, startPrivateSentinel } from '../helpers/private-redis-topologies';
import { freePorts } from '../helpers/private-node';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Subject {
  name: string;
  /** Starts what the subject's tests share (once, before them); undefined: a reason to skip. */
  setup?(context: Mocha.Context): Promise<void>;
  teardown?(): Promise<void>;
  open(): Promise<{ store: DedupeStore; cleanup(): Promise<void> }>;
}

/** A Redis store on a private topology (a cluster or a master watched by Sentinel), its keys removed by the topology's end. */
function privateRedisSubject(name: string, start: () => Promise<{ url: string; remove(): Promise<void> }>, needsCli = false): Subject {
  let topology: { url: string; remove(): Promise<void> } | undefined;
  return {
    name,
    setup: async (context) => {
      context.timeout(120_000);
      if (!canStartPrivateRedis()) skipBecause(context, NO_PRIVATE_REDIS);
      if (needsCli && !canCreateCluster()) skipBecause(context, NO_REDIS_CLI);
      topology = await start();
    },
    teardown: async () => {
      await topology?.remove();
    },
    open: async () => {
      const store = new RedisDedupeStore({ url: topology!.url, prefix: `test-dedupe-${randomBytes(4).toString('hex')}:` });
      await store.prepare();
      return { store, cleanup: () => store.close() };
    },
  };
}

function table(): string {
  return `test_dedupe_${randomBytes(4).toString('hex')}`;
}

const shared = sharedStoreSubjects('dedupe');
const subjects: Subject[] = [
  shared.memory,
  shared.redis,
  privateRedisSubject('redis cluster (3 masters, 3 replicas)', startPrivateCluster, true),
  privateRedisSubject('redis sentinel (master, replica, sentinel)', startPrivateSentinel),
  shared.postgres,
];

const k = (key: string, scope = 'orders'): DedupeKey => ({ scope, key });

for (const subject of subjects) {
  describe(`deduplication store: ${subject.name} (real service)`, function () {
    let store: DedupeStore;
    let opened: { store: DedupeStore; cleanup(): Promise<void> };

    before(async function () {
      await subject.setup?.(this);
    });
    after(async () => {
      await subject.teardown?.();
    });
    beforeEach(async () => {
      opened = await subject.open();
      store = opened.store;
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    it('claims a new key, says held to another owner, claimed again to its owner (lease renewed)', async () => {
      assert.deepEqual(await store.claim([k('p-1')], 'A', 60_000), [{ state: 'claimed' }]);
      const [held] = await store.claim([k('p-1')], 'B', 60_000);
      assert.equal(held?.state, 'held');
      assert.equal(held?.state === 'held' && held.owner, 'A');
      assert.ok(held?.state === 'held' && held.until > Date.now() + 50_000, 'held until the lease ends');
      assert.deepEqual(await store.claim([k('p-1')], 'A', 60_000), [{ state: 'claimed' }]);
    });

    it('a done key is a duplicate for everyone; the same key in another scope is another record', async () => {
      await store.claim([k('p-2')], 'A', 60_000);
      await store.complete([k('p-2')], 60_000);
      assert.deepEqual(await store.claim([k('p-2')], 'A', 60_000), [{ state: 'done' }]);
      assert.deepEqual(await store.claim([k('p-2')], 'B', 60_000), [{ state: 'done' }]);
      assert.deepEqual(await store.claim([k('p-2', 'refunds')], 'B', 60_000), [{ state: 'claimed' }]);
    });

    it('a released key is processed again (a retry is not a duplicate: the SET NX-before-handling bug)', async () => {
      assert.deepEqual(await store.claim([k('p-3')], 'A', 60_000), [{ state: 'claimed' }]);
      await store.release([k('p-3')], 'A');
      // The retry comes back, to this consumer or another: it must be processed, not acked as a duplicate.
      assert.deepEqual(await store.claim([k('p-3')], 'B', 60_000), [{ state: 'claimed' }]);
    });

    it('release only removes the owner\'s claim, never a done key or another owner\'s claim', async () => {
      await store.claim([k('p-4'), k('p-5')], 'A', 60_000);
      await store.complete([k('p-4')], 60_000);
      await store.release([k('p-4'), k('p-5')], 'B');
      const [four, five] = await store.claim([k('p-4'), k('p-5')], 'B', 60_000);
      assert.deepEqual(four, { state: 'done' });
      assert.equal(five?.state === 'held' && five.owner, 'A');
    });

    it('an ended lease can be claimed by another owner; an ended retention is processed again', async () => {
      await store.claim([k('p-6')], 'A', 150);
      await store.claim([k('p-7')], 'A', 60_000);
      await store.complete([k('p-7')], 150);
      await sleep(400);
      assert.deepEqual(await store.claim([k('p-6'), k('p-7')], 'B', 60_000), [{ state: 'claimed' }, { state: 'claimed' }]);
    });

    it('answers a batch in order, a key twice in one batch included', async () => {
      await store.claim([k('b-2')], 'other', 60_000);
      await store.complete([k('b-3')], 60_000);
      const results = await store.claim([k('b-1'), k('b-2'), k('b-3'), k('b-1')], 'A', 60_000);
      assert.deepEqual(
        results.map((r) => r.state),
        ['claimed', 'held', 'done', 'claimed'],
      );
      await store.complete([k('b-1'), k('b-1')], 60_000);
      assert.deepEqual(await store.claim([k('b-1')], 'A', 60_000), [{ state: 'done' }]);
    });

    it('a batch of keys in several scopes: each answered in order, each scope its own record', async () => {
      await store.claim([k('m-1', 'refunds')], 'other', 60_000);
      await store.complete([k('m-2'), k('m-2', 'refunds')], 60_000);
      const results = await store.claim([k('m-1'), k('m-1', 'refunds'), k('m-2', 'refunds'), k('m-3'), k('m-1')], 'A', 60_000);
      assert.deepEqual(
        results.map((r) => r.state),
        ['claimed', 'held', 'done', 'claimed', 'claimed'],
      );
      await store.release([k('m-3'), k('m-1', 'refunds')], 'A');
      assert.deepEqual(await store.claim([k('m-1', 'refunds')], 'B', 60_000).then((r) => r.map((x) => x.state)), ['held'], "another owner's claim stays");
      if (!store.exchange) return;
      const answers = await store.exchange({ complete: [k('m-1')], retentionMs: 60_000, release: [k('m-4', 'refunds')], claim: [k('m-3', 'refunds'), k('m-3'), k('m-2')], owner: 'B', leaseMs: 60_000 });
      assert.deepEqual(
        answers.map((r) => r.state),
        ['claimed', 'claimed', 'done'],
      );
      assert.deepEqual(await store.claim([k('m-1'), k('m-3')], 'C', 60_000).then((r) => r.map((x) => x.state)), ['done', 'held']);
    });

    it('takes keys as long as maxKeyBytes, with any characters', async () => {
      const long = 'x'.repeat(store.maxKeyBytes - 'orders'.length - 8);
      const odd = 'pay:ment/ü 1\n"\'%*';
      assert.deepEqual(await store.claim([k(long), k(odd)], 'A', 60_000), [{ state: 'claimed' }, { state: 'claimed' }]);
      await store.complete([k(odd)], 60_000);
      assert.deepEqual(await store.claim([k(odd)], 'B', 60_000), [{ state: 'done' }]);
    });

    it('a gate on the store: a retried delivery is processed again, a copy of an acked one is a duplicate', async () => {
      const gate = new DedupeGate({ store, scope: 'orders', leaseMs: 60_000, retentionMs: 60_000, storeDown: 'pause' });
      assert.equal(await gate.admit('g-1'), 'claimed');
      gate.release('g-1');
      await sleep(20);
      assert.equal(await gate.admit('g-1'), 'claimed', 'the retry is processed again');
      await gate.complete('g-1');
      assert.equal(await gate.admit('g-1'), 'duplicate');
      await gate.close();
    });
  });
}

describe('deduplication store failures (private servers)', function () {
  it('Redis with a wrong password: an auth problem naming the server, never the password', async function () {
    if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
    const server = await startPrivateRedis('right-secret');
    const store = new RedisDedupeStore({ url: server.url, password: 'wrong-secret' });
    try {
      await assert.rejects(store.prepare(), (err: unknown) => {
        assert.ok(err instanceof DedupeStoreError);
        assert.equal(err.problem, 'auth');
        assert.match(err.message, new RegExp(`redis 127.0.0.1:${server.port}`));
        assert.doesNotMatch(err.message, /secret/);
        return true;
      });
      const right = new RedisDedupeStore({ url: server.url, password: 'right-secret' });
      await right.prepare();
      assert.deepEqual(await right.claim([k('a')], 'A', 1000), [{ state: 'claimed' }]);
      await right.close();
    } finally {
      await store.close();
      await server.remove();
    }
  });

  it('Redis that stops: calls fail at once as unreachable, and work again when it is back', async function () {
    if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
    const server = await startPrivateRedis();
    const store = new RedisDedupeStore({ url: server.url });
    try {
      await store.prepare();
      await server.stop();
      await assert.rejects(store.claim([k('a')], 'A', 1000), (err: unknown) => err instanceof DedupeStoreError && err.problem === 'unreachable');
      // Every call of the outage in one wording, never the client's text (issue 28).
      for (const call of [() => store.claim([k('b')], 'A', 1000), () => store.complete([k('b')], 1000), () => store.release([k('b')], 'A'), () => store.ping()]) {
        await assert.rejects(call(), (err: unknown) => err instanceof DedupeStoreError && /^redis 127\.0\.0\.1:\d+ cannot be reached \((connection refused|connection lost)\)$/.test(err.message));
      }
      await server.start();
      await waitFor(() => store.ping().then(() => true, () => false), 'redis back');
      assert.deepEqual(await store.claim([k('a')], 'A', 1000), [{ state: 'claimed' }]);
    } finally {
      await store.close();
      await server.remove();
    }
  });

  it('Sentinel: no sentinel answering, or a master name it does not know, said in words at the first start; a closed store leaves no connection to the sentinel', async function () {
    this.timeout(120_000);
    if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
    const [nobody] = await freePorts(1);
    const unreachable = new RedisDedupeStore({ url: `redis+sentinel://127.0.0.1:${nobody}/mymaster`, timeoutMs: 1000 });
    await assert.rejects(unreachable.prepare(), (err: unknown) => err instanceof DedupeStoreError && err.problem === 'unreachable' && err.message === `redis sentinel mymaster (127.0.0.1:${nobody}) cannot be reached (no sentinel answers)`);
    await unreachable.close();
    const sentinel = await startPrivateSentinel();
    const port = Number(/:(\d+)\//.exec(sentinel.url)?.[1]);
    // The sentinel's clients but the one asking (no other sentinel or replica connects to it).
    const clients = async (): Promise<number> => String(await ask(port, 'CLIENT', 'LIST')).split('\n').filter((line) => line.trim() !== '' && !line.includes('cmd=client|list')).length;
    try {
      const unknown = new RedisDedupeStore({ url: sentinel.url.replace(/\/\w+$/, '/nosuch'), timeoutMs: 1000 });
      await assert.rejects(unknown.prepare(), (err: unknown) => err instanceof DedupeStoreError && /the sentinels know no master of that name/.test(err.message));
      await unknown.close();
      const store = new RedisDedupeStore({ url: sentinel.url });
      await store.prepare();
      assert.deepEqual(await store.claim([k('s')], 'A', 1000), [{ state: 'claimed' }]);
      assert.ok((await clients()) > 0, 'the store watches the sentinel for a failover');
      await store.close();
      await waitFor(async () => (await clients()) === 0, 'no connection of the store left at the sentinel (the failover watch closed too)');
    } finally {
      await sentinel.remove();
    }
  });

  it('Cluster: no node answering is said in words at the first start', async () => {
    const [nobody] = await freePorts(1);
    const store = new RedisDedupeStore({ url: `redis+cluster://127.0.0.1:${nobody}`, timeoutMs: 1000 });
    await assert.rejects(store.prepare(), (err: unknown) => err instanceof DedupeStoreError && err.message === `redis cluster 127.0.0.1:${nobody} cannot be reached (no cluster node answers)`);
    await store.close();
  });

  it('PostgreSQL with a wrong password: an auth problem naming the database', async function () {
    this.timeout(60_000);
    if (!canStartPrivatePostgres()) skipBecause(this, NO_PRIVATE_POSTGRES);
    const server = await startPrivatePostgres('right-secret');
    const db = new PostgresDatabase({ connectionString: server.url, password: 'wrong-secret' });
    const store = new PostgresDedupeStore(db, { table: parseTableName('dedupe') as never, mode: 'declare', sweepMs: 0 });
    try {
      await assert.rejects(store.prepare(), (err: unknown) => {
        assert.ok(err instanceof DedupeStoreError);
        assert.equal(err.problem, 'auth');
        assert.match(err.message, new RegExp(`postgres@127.0.0.1:${server.port}/postgres`));
        assert.doesNotMatch(err.message, /secret/);
        return true;
      });
      assert.equal(db.state.phase, 'down');
    } finally {
      await store.close();
      await db.close();
      await server.remove();
    }
  });

  it('PostgreSQL check mode names what is missing and changes nothing; declare mode creates it', async () => {
    const db = new PostgresDatabase({ connectionString: DATABASE_URL });
    const name = table();
    try {
      const check = new PostgresDedupeStore(db, { table: parseTableName(name) as never, mode: 'check', sweepMs: 0 });
      await assert.rejects(check.prepare(), (err: unknown) => err instanceof DedupeStoreError && err.problem === 'schema' && err.message.includes(`table "${name}" does not exist`));
      // The database answers, the table is not usable: a ping (the health report's, the gate's probe) says the table, not up.
      await assert.rejects(check.ping(), (err: unknown) => err instanceof DedupeStoreError && err.problem === 'schema' && err.message.includes(`table "${name}" does not exist`));
      await db.query(`CREATE TABLE ${name} (scope text NOT NULL, key text NOT NULL, state text NOT NULL, expires_at timestamptz NOT NULL)`);
      await assert.rejects(check.prepare(), (err: unknown) => {
        assert.ok(err instanceof DedupeStoreError);
        assert.match(err.message, /has no column owner \(text\)/);
        assert.match(err.message, /has no primary key \(scope, key\)/);
        assert.doesNotMatch(err.message, /expires_at/, 'an index on expires_at is not needed');
        return true;
      });
      await db.query(`DROP TABLE ${name}`);
      const declare = new PostgresDedupeStore(db, { table: parseTableName(name) as never, mode: 'declare', sweepMs: 0 });
      await declare.prepare();
      await check.ping(); // the table is there now: the ping's check finds it right
      await check.prepare();
      const swept = await declare.claim([k('s-1')], 'A', 1).then(() => sleep(50)).then(() => declare.sweep());
      assert.equal(swept, 1, 'expired rows are swept');
    } finally {
      await db.query(`DROP TABLE IF EXISTS ${name}`);
      await db.close();
    }
  });
});
