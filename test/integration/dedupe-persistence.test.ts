/**
 * What the Redis store's server keeps on disk (issue 28), on private Redis servers of the test's own
 * (the shared one is never reconfigured): read at the store's first start; a server that keeps
 * nothing is said in the log and on the consumer's status, one with an append-only file is only
 * noted in the log.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';
import { canStartPrivateRedis, NO_PRIVATE_REDIS, startPrivateRedis, type PrivateServer } from '../helpers/private-stores';
import { skipBecause } from '../helpers/skips';
import { RedisDedupeStore, type RedisPersistence } from '../../src/lib/dedupe';

describe('Redis store: what the server keeps on disk (private servers)', function () {
  let server: PrivateServer | undefined;

  beforeEach(function () {
    if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
  });

  afterEach(async () => {
    await server?.remove();
    server = undefined;
  });

  async function persistenceAt(url: string): Promise<RedisPersistence[]> {
    const told: RedisPersistence[] = [];
    const store = new RedisDedupeStore({ url, onPersistence: (p) => told.push(p) });
    try {
      await store.prepare();
      await store.prepare(); // a second consumer starting on it: told once
    } finally {
      await store.close();
    }
    return told;
  }

  it('a server without AOF or snapshots (--save "" --appendonly no): keeps nothing', async () => {
    server = await startPrivateRedis();
    assert.deepEqual(await persistenceAt(server.url), [{ aof: false, save: '', appendfsync: 'everysec' }]);
  });

  it('a server with an append-only file (--appendonly yes): AOF, appendfsync everysec', async () => {
    server = await startPrivateRedis(undefined, { aof: true });
    assert.deepEqual(await persistenceAt(server.url), [{ aof: true, save: '', appendfsync: 'everysec' }]);
  });

  describe('in the Node-RED runtime', () => {
    let broker: Broker;
    let names: Names;

    beforeEach(async () => {
      broker = await Broker.open();
      names = uniqueNames('dedupe-persistence');
      broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
      broker.track('exchange', names.mainExchange, names.retryExchange);
    });

    afterEach(async () => {
      await helper.unload();
      await broker.cleanup();
    });

    async function load(url: string): Promise<void> {
      await loadFlow([
        tab(),
        brokerNode(),
        configNode(names),
        { id: 'store', type: 'retry-dedupe', kind: 'redis', url, prefix: 'test-persistence:' },
        consumerNode([['ack']], { dedupe: 'store', statsEvery: '0' }),
        { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      ]);
      await broker.waitForConsumer(names.mainQueue);
    }

    const storeLog = (): Array<[number, string]> =>
      helper
        .log()
        .args.map(([entry]) => entry)
        .filter((entry) => entry.id === 'store')
        .map((entry) => [entry.level, String(entry.msg)]);

    it('keeps nothing: a warning in the log, and the consumer says it on its status (yellow)', async () => {
      server = await startPrivateRedis();
      await load(server.url);
      await waitFor(() => (lastStatus('consumer')?.text ?? '').endsWith(' · dedup keys forgotten on restart'), 'the status saying it');
      assert.equal(lastStatus('consumer')?.fill, 'yellow');
      const logged = storeLog();
      assert.equal(logged.length, 1);
      assert.equal(logged[0]![0], 30, 'a warning');
      assert.match(logged[0]![1], /^redis 127\.0\.0\.1:\d+ keeps nothing on disk \(no AOF, no RDB snapshots\): processed keys are forgotten on a restart/);
    });

    it('an append-only file: noted in the log at info level, the status stays green', async () => {
      server = await startPrivateRedis(undefined, { aof: true });
      await load(server.url);
      await waitFor(() => storeLog().length > 0, 'the note in the log');
      assert.deepEqual(storeLog(), [[40, `redis 127.0.0.1:${server.port} keeps processed keys in its append-only file (appendfsync everysec)`]]);
      await waitFor(() => lastStatus('consumer')?.fill === 'green', 'a green status');
      assert.doesNotMatch(lastStatus('consumer')?.text ?? '', /forgotten/);
    });
  });
});
