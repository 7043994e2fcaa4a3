/** The health report, case by case: what each part's state means, and when the whole is ready. */
import assert from 'node:assert/strict';
import { healthReport, type BrokerInput, type ConsumerInput, type DatabaseInput, type HealthInput, type RelayInput, type StoreInput } from '../../../src/lib/health';

const NOW = Date.parse('2026-01-01T12:00:00Z');

const broker = (over: Partial<BrokerInput> = {}): BrokerInput => ({ id: 'b1', name: 'local', url: 'amqp://127.0.0.1:5672', phase: 'connected', since: NOW - 60_000, address: '127.0.0.1:5672', used: true, ...over });
const consumer = (over: Partial<ConsumerInput> = {}): ConsumerInput => ({ id: 'c1', name: 'orders', queue: 'orders', phase: 'consuming', ...over });
const store = (over: Partial<StoreInput> = {}): StoreInput => ({ id: 's1', name: 'keys', store: 'redis 127.0.0.1:6379', used: true, ...over });
const database = (over: Partial<DatabaseInput> = {}): DatabaseInput => ({ id: 'd1', name: 'app', database: 'app@db:5432/app', used: true, phase: 'up', ...over });
const relay = (over: Partial<RelayInput> = {}): RelayInput => ({ id: 'r1', name: 'outbox', table: 'public.outbox', brokerConnected: true, look: { at: NOW, pending: 0, failed: 0, oldestPendingMs: null }, ...over });

function report(over: Partial<HealthInput>): ReturnType<typeof healthReport> {
  return healthReport({ brokers: [], consumers: [], stores: [], databases: [], relays: [], ...over }, NOW);
}

describe('health report', () => {
  it('is ready with nothing deployed', () => {
    const r = report({});
    assert.equal(r.ready, true);
    assert.equal(r.status, 'ready');
    assert.equal(r.at, '2026-01-01T12:00:00.000Z');
    assert.deepEqual(r.problems, []);
  });

  it('is ready when every part is up: a connected broker says since when', () => {
    const r = report({ brokers: [broker()], consumers: [consumer()], stores: [store()], databases: [database()], relays: [relay()] });
    assert.equal(r.ready, true);
    assert.equal(r.status, 'ready');
    assert.deepEqual(r.brokers[0], { id: 'b1', name: 'local', url: 'amqp://127.0.0.1:5672', connected: true, since: '2026-01-01T11:59:00.000Z', status: 'up', address: '127.0.0.1:5672' });
    assert.equal(r.consumers[0]?.status, 'up');
    assert.equal(r.stores[0]?.status, 'up');
    assert.equal(r.databases[0]?.status, 'up');
    assert.equal(r.relays[0]?.status, 'up');
  });

  it('is not ready while a broker in use cannot connect: names it, why, since when and the next attempt', () => {
    const r = report({ brokers: [broker({ phase: 'waiting', error: 'ECONNREFUSED', nextAttemptAt: NOW + 4000, address: undefined })], consumers: [consumer({ phase: 'waiting-for-connection' })] });
    assert.equal(r.ready, false);
    assert.equal(r.status, 'not ready');
    const b = r.brokers[0];
    assert.equal(b?.status, 'down');
    assert.equal(b?.connected, false);
    assert.equal(b?.since, '2026-01-01T11:59:00.000Z');
    assert.equal(b?.nextAttempt, '2026-01-01T12:00:04.000Z');
    assert.match(b?.reason ?? '', /ECONNREFUSED/);
    assert.deepEqual(r.problems, ["broker 'local': cannot connect: ECONNREFUSED", "consumer 'orders': waiting for the broker connection"]);
  });

  it('is not ready while a broker is still connecting, ready while an unused broker rests', () => {
    assert.equal(report({ brokers: [broker({ phase: 'connecting' })] }).brokers[0]?.status, 'waiting');
    assert.equal(report({ brokers: [broker({ phase: 'connecting' })] }).ready, false);
    const idle = report({ brokers: [broker({ phase: 'idle', used: false })] });
    assert.equal(idle.brokers[0]?.status, 'unused');
    assert.equal(idle.ready, true);
  });

  it('is not ready with a broker configuration that cannot work and is used', () => {
    const r = report({ brokers: [broker({ phase: 'invalid', error: 'bad URL' })] });
    assert.equal(r.brokers[0]?.status, 'down');
    assert.deepEqual(r.problems, ["broker 'local': configuration not usable: bad URL"]);
    assert.equal(report({ brokers: [broker({ phase: 'invalid', error: 'bad URL', used: false })] }).ready, true);
  });

  it("says a store's table problem as a table problem, not a store down", () => {
    const detail = 'postgres app@db/test table "nosuch": table "nosuch" does not exist (declare mode creates it)';
    const r = report({ consumers: [consumer({ phase: 'store-down', detail, storeProblem: 'schema' })] });
    assert.equal(r.ready, false);
    assert.equal(r.consumers[0]?.reason, `deduplication table not usable: ${detail}`);
    assert.equal(report({ consumers: [consumer({ phase: 'store-down', detail: 'ECONNREFUSED', storeProblem: 'unreachable' })] }).consumers[0]?.reason, 'deduplication store down: ECONNREFUSED');
  });

  it('is not ready with a consumer whose topology failed, whose store is down, whose channel was lost, or that did not start', () => {
    for (const [phase, words] of [
      ['topology-error', /topology failed: queue 'orders' differs/],
      ['store-down', /deduplication store down/],
      ['channel-lost', /channel lost/],
      ['not-started', /not started/],
      ['checking-topology', /checking its topology/],
      ['stopped', /stopped/],
    ] as const) {
      const r = report({ consumers: [consumer({ phase, detail: "queue 'orders' differs" })] });
      assert.equal(r.ready, false, phase);
      assert.match(r.problems[0] ?? '', words, phase);
      assert.match(r.problems[0] ?? '', /^consumer 'orders': /, phase);
      assert.equal(r.consumers[0]?.state, phase);
    }
  });

  it('is ready with a consumer paused by a control msg (not a failure)', () => {
    const r = report({ consumers: [consumer({ phase: 'paused' })] });
    assert.equal(r.ready, true);
    assert.equal(r.status, 'ready');
    assert.equal(r.consumers[0]?.status, 'paused');
  });

  it('is ready but degraded while a kill switch is open or probing, or an ordered consumer is blocked', () => {
    for (const input of [consumer({ phase: 'circuit-open', circuit: 'open' }), consumer({ phase: 'consuming', circuit: 'probing' }), consumer({ phase: 'blocked', detail: 'blocked since …' })]) {
      const r = report({ consumers: [input] });
      assert.equal(r.ready, true, input.phase);
      assert.equal(r.status, 'degraded', input.phase);
      assert.equal(r.consumers[0]?.status, 'degraded');
      assert.equal(r.warnings.length, 1);
      assert.deepEqual(r.problems, []);
    }
    assert.equal(report({ consumers: [consumer({ circuit: 'closed' })] }).status, 'ready');
  });

  it('is not ready while a store or a database in use does not answer; unused ones do not count', () => {
    const down = report({ stores: [store({ problem: 'connect ECONNREFUSED' })], databases: [database({ phase: 'down', problem: 'PostgreSQL app@db: not reachable' })] });
    assert.equal(down.ready, false);
    assert.deepEqual(down.problems, ["deduplication store 'keys': connect ECONNREFUSED", "database 'app': PostgreSQL app@db: not reachable"]);
    const unused = report({ stores: [store({ used: false, problem: 'x' })], databases: [database({ used: false, phase: 'down', problem: 'x' })] });
    assert.equal(unused.ready, true);
    assert.equal(unused.stores[0]?.status, 'unused');
    assert.equal(unused.databases[0]?.status, 'unused');
    assert.equal(report({ databases: [database({ phase: 'connecting' })] }).databases[0]?.status, 'waiting');
    assert.equal(report({ databases: [database({ phase: 'invalid', problem: 'set a host' })] }).problems[0], "database 'app': configuration not usable: set a host");
  });

  it('gives an outbox relay the age of its oldest pending event now', () => {
    const r = report({ relays: [relay({ look: { at: NOW - 3000, pending: 4, failed: 0, oldestPendingMs: 60_000 } })] });
    assert.deepEqual(r.relays[0], { id: 'r1', name: 'outbox', table: 'public.outbox', pending: 4, failed: 0, oldestPendingSeconds: 63, status: 'up' });
    assert.equal(report({ relays: [relay({ look: undefined })] }).relays[0]?.oldestPendingSeconds, null);
  });

  it('is not ready while a relay cannot read its table or has no broker; degraded with failed events', () => {
    const unreadable = report({ relays: [relay({ look: { at: NOW, error: 'connect ECONNREFUSED 127.0.0.1:5432' } })] });
    assert.equal(unreadable.ready, false);
    assert.deepEqual(unreadable.problems, ["outbox relay 'outbox': cannot read its table: connect ECONNREFUSED 127.0.0.1:5432"]);
    assert.equal(report({ relays: [relay({ problem: 'outbox table: column x missing' })] }).relays[0]?.status, 'down');
    assert.equal(report({ relays: [relay({ brokerConnected: false })] }).relays[0]?.status, 'waiting');
    const failed = report({ relays: [relay({ look: { at: NOW, pending: 0, failed: 2, oldestPendingMs: null } })] });
    assert.equal(failed.ready, true);
    assert.equal(failed.status, 'degraded');
    assert.match(failed.warnings[0] ?? '', /2 events failed/);
  });
});
