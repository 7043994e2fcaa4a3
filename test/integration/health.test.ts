/**
 * Issue 27: the retry health node and GET <admin>/rabbitmq-retry/health in the Node-RED runtime, on
 * the real broker, PostgreSQL and Redis: 200 with a connected broker and a consuming consumer; 503
 * naming a consumer whose topology failed, a deduplication store that does not answer, a broker that
 * cannot be reached; an outbox relay's pending events and the age of the oldest.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';
import { freePort } from '../helpers/node-red-process';
import { DATABASE_URL } from '../helpers/private-stores';
import type { HealthReport } from '../../src/lib/health';
import { dedupeTableDdl } from '../../src/lib/dedupe';
import { parseTableName, PostgresDatabase, type TableName } from '../../src/lib/postgres';

type Msg = Record<string, any>;

describe('health probes in the Node-RED runtime (real broker, PostgreSQL, Redis)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('health');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  type Probe = () => Promise<{ statusCode: number; report: HealthReport }>;

  /** Loads the flow with a health node wired to a helper; the probe sends it a msg and resolves with what it answers. */
  async function load(nodes: Array<Record<string, unknown>>): Promise<Probe> {
    await loadFlow([tab(), ...nodes, { id: 'health', type: 'retry-health', z: 'flow', wires: [['answer']] }, { id: 'answer', type: 'helper', z: 'flow' }]);
    const waiting: Array<(answer: { statusCode: number; report: HealthReport }) => void> = [];
    helper.getNode('answer').on('input', (msg: Msg) => waiting.shift()?.({ statusCode: msg.statusCode as number, report: msg.payload as HealthReport }));
    return () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        helper.getNode('health').receive({ payload: 'any', req: {} });
      });
  }

  /** Probes until the answer has the status code (the parts take a moment to come up); the last answer. */
  async function until(probe: Probe, statusCode: number, what: string): Promise<HealthReport> {
    let last: { statusCode: number; report: HealthReport } | undefined;
    await waitFor(async () => {
      last = await probe();
      return last.statusCode === statusCode;
    }, `${what} (last answer: ${JSON.stringify(last?.report)})`);
    return last!.report;
  }

  it('answers 200 with a connected broker and a consuming consumer; the admin endpoint serves the same report', async () => {
    const probe = await load([brokerNode({ name: 'shared broker' }), configNode(names), consumerNode([[]], { name: 'orders' })]);
    await broker.waitForConsumer(names.mainQueue);
    const report = await until(probe, 200, 'ready');
    assert.equal(report.ready, true);
    assert.equal(report.status, 'ready');
    assert.deepEqual(report.problems, []);
    const [b] = report.brokers;
    assert.equal(b?.name, 'shared broker');
    assert.equal(b?.connected, true);
    assert.equal(b?.status, 'up');
    assert.ok(Date.parse(b?.since ?? '') <= Date.now(), 'connected since a time');
    assert.deepEqual(
      report.consumers.map((c) => [c.name, c.queue, c.state, c.status]),
      [['orders', names.mainQueue, 'consuming', 'up']],
    );
    assert.deepEqual(lastStatus('health'), { fill: 'green', shape: 'dot', text: 'node-red-contrib-rabbitmq-retry/retry-health:retry-health.status.ready' });

    const response = await helper.request().get('/rabbitmq-retry/health');
    assert.equal(response.status, 200);
    const served = JSON.parse(response.text) as HealthReport;
    assert.equal(served.ready, true);
    assert.deepEqual(
      served.consumers.map((c) => c.state),
      ['consuming'],
    );
  });

  it('finds a consumer inside a subflow instance through its configuration', async () => {
    const probe = await load([
      brokerNode(),
      configNode(names),
      { id: 'sf', type: 'subflow', name: 'consuming subflow', in: [], out: [] },
      { ...consumerNode([[]], { name: 'in a subflow' }), z: 'sf' },
      { id: 'instance', type: 'subflow:sf', z: 'flow', wires: [] },
    ]);
    await broker.waitForConsumer(names.mainQueue);
    const report = await until(probe, 200, 'ready');
    assert.deepEqual(
      report.consumers.map((c) => [c.name, c.queue, c.state]),
      [['in a subflow', names.mainQueue, 'consuming']],
    );
  });

  it('answers 503 naming a consumer whose topology failed (check mode, queues missing), 200 for the others', async () => {
    const missing = uniqueNames('health-missing');
    const probe = await load([
      brokerNode(),
      configNode(names),
      consumerNode([[]], { name: 'fine' }),
      configNode(missing, { id: 'config2', mode: 'check' }),
      consumerNode([[]], { id: 'consumer2', config: 'config2', name: 'broken' }),
    ]);
    await broker.waitForConsumer(names.mainQueue);
    await waitFor(async () => (await probe()).report.consumers.some((c) => c.state === 'topology-error'), 'the topology error');
    const { report: answer, statusCode } = await probe();
    assert.equal(statusCode, 503);
    assert.equal(answer.ready, false);
    const broken = answer.consumers.find((c) => c.name === 'broken');
    assert.equal(broken?.status, 'down');
    assert.match(broken?.reason ?? '', /^topology failed: /);
    assert.ok(
      answer.problems.some((p) => p.startsWith("consumer 'broken': topology failed")),
      JSON.stringify(answer.problems),
    );
    assert.ok(!answer.problems.some((p) => p.includes("'fine'")), 'the consuming consumer is no problem');
    assert.match(lastStatus('health')?.text ?? '', /not ready: consumer 'broken'/);
    assert.equal((await helper.request().get('/rabbitmq-retry/health')).status, 503);
  });

  it('answers 503 naming a broker that cannot be reached, with the reason and the next attempt', async () => {
    const port = await freePort();
    const probe = await load([brokerNode({ name: 'nowhere', url: `amqp://guest:guest@127.0.0.1:${port}` }), configNode(names), consumerNode([[]])]);
    await waitFor(async () => (await probe()).report.brokers[0]?.nextAttempt !== undefined, 'a reconnect attempt scheduled');
    const { report, statusCode } = await probe();
    assert.equal(statusCode, 503);
    const [b] = report.brokers;
    assert.equal(b?.status, 'down');
    assert.equal(b?.connected, false);
    assert.match(b?.reason ?? '', /^cannot connect: /);
    assert.ok(Date.parse(b?.nextAttempt ?? '') > Date.parse(b?.since ?? ''), 'the next attempt is after the connection went down');
    assert.ok(report.problems[0]?.startsWith("broker 'nowhere': cannot connect"), JSON.stringify(report.problems));
  });

  it('answers 503 naming a deduplication store that does not answer, and its consumer', async () => {
    const port = await freePort();
    const probe = await load([
      brokerNode(),
      configNode(names),
      { id: 'store', type: 'retry-dedupe', name: 'keys', kind: 'redis', url: `redis://127.0.0.1:${port}` },
      consumerNode([[]], { name: 'deduplicated', dedupe: 'store' }),
    ]);
    await waitFor(async () => (await probe()).report.consumers[0]?.state === 'store-down', 'the consumer stopped by its store');
    const { report: answer, statusCode } = await probe();
    assert.equal(statusCode, 503);
    assert.equal(answer.stores[0]?.status, 'down');
    assert.ok(answer.problems.some((p) => p.startsWith("deduplication store 'keys': ")), JSON.stringify(answer.problems));
    assert.ok(answer.problems.some((p) => p.startsWith("consumer 'deduplicated': deduplication store down")), JSON.stringify(answer.problems));
  });

  it("says a missing dedupe table (check mode) is a table problem, on the consumer's status and in the report, not a store down; it starts by itself once the table exists", async () => {
    const table = `test_health_nosuch_${randomBytes(4).toString('hex')}`;
    const db = new PostgresDatabase({ connectionString: DATABASE_URL });
    try {
      const probe = await load([
        brokerNode(),
        configNode(names),
        { id: 'db', type: 'retry-postgres', name: 'app db', url: DATABASE_URL },
        { id: 'store', type: 'retry-dedupe', name: 'keys', kind: 'postgres', postgres: 'db', table, mode: 'check' },
        consumerNode([[]], { name: 'deduplicated', dedupe: 'store' }),
      ]);
      await waitFor(async () => (await probe()).report.consumers[0]?.state === 'store-down', 'the consumer stopped by its table');
      const status = lastStatus('consumer');
      assert.equal(status?.fill, 'red');
      assert.match(status?.text ?? '', /^dedup table not usable: postgres .* table "test_health_nosuch_/);
      const { report: answer, statusCode } = await probe();
      assert.equal(statusCode, 503);
      const [entry] = answer.stores;
      assert.notEqual(entry?.status, 'up', JSON.stringify(entry));
      assert.match(entry?.reason ?? '', new RegExp(`table "${table}" does not exist \\(declare mode creates it\\)`));
      assert.match(answer.consumers[0]?.reason ?? '', new RegExp(`^deduplication table not usable: .*table "${table}" does not exist`));
      assert.ok(!answer.problems.some((p) => p.includes('deduplication store down')), JSON.stringify(answer.problems));
      // Once the table exists the store is up at the next look, and the consumer starts by itself (its setup is checked again with backoff).
      for (const statement of dedupeTableDdl(parseTableName(table) as TableName)) await db.query(statement);
      assert.equal((await probe()).report.stores[0]?.status, 'up');
      await waitFor(async () => (await probe()).report.consumers[0]?.state === 'consuming', 'the consumer consuming once the table exists', 60_000);
    } finally {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
      await db.close();
    }
  });

  describe('outbox', () => {
    let db: PostgresDatabase;
    let table: string;

    beforeEach(() => {
      db = new PostgresDatabase({ connectionString: DATABASE_URL });
      table = `test_health_outbox_${randomBytes(4).toString('hex')}`;
    });

    afterEach(async () => {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
      await db.close();
    });

    it('reports the database answering and a relay’s pending events with the age of the oldest (its broker away: not ready)', async () => {
      const port = await freePort();
      const probe = await load([
        brokerNode({ name: 'away', url: `amqp://guest:guest@127.0.0.1:${port}` }),
        { id: 'db', type: 'retry-postgres', name: 'orders db', url: DATABASE_URL },
        { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table, mode: 'declare', event: true, exchange: 'amq.direct', routingKey: 'x', wires: [['written']] },
        { id: 'written', type: 'helper', z: 'flow' },
        { id: 'relay', type: 'outbox-relay', z: 'flow', name: 'orders relay', broker: 'broker', postgres: 'db', table, mode: 'declare', wires: [[]] },
      ]);
      const written = new Promise((resolve) => helper.getNode('written').on('input', resolve));
      helper.getNode('write').receive({ payload: { id: 1 } });
      await written;
      await waitFor(async () => (await probe()).report.relays[0]?.pending === 1, 'the relay to see the pending event', 30_000);
      const { report, statusCode } = await probe();
      assert.equal(statusCode, 503);
      assert.deepEqual(
        report.databases.map((d) => [d.name, d.status]),
        [['orders db', 'up']],
      );
      const [relay] = report.relays;
      assert.equal(relay?.name, 'orders relay');
      assert.equal(relay?.table, table, 'its table as people read it, not quoted for SQL');
      assert.equal(relay?.status, 'waiting');
      assert.equal(relay?.failed, 0);
      assert.equal(typeof relay?.oldestPendingSeconds, 'number');
      assert.ok(report.problems.some((p) => p.startsWith("broker 'away': ")));
      assert.ok(report.problems.some((p) => p.startsWith("outbox relay 'orders relay': waiting for the broker")));
    });
  });
});
