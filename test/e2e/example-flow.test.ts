/**
 * End to end: the example flow, installed from `npm pack` output into a fresh Node-RED user
 * directory and deployed through the admin HTTP API of a real Node-RED process, produces exactly
 * the expected outcome when its inject nodes are triggered (good twice, poison once).
 *
 * The same scenario runs on each Node-RED version of node-red-runtimes.ts: 4.1 on the current
 * Node.js (loads node modules with require()) and 5.0 on Node.js 22 (loads them with import()).
 *
 * Needs `npm run build` first (the tarball packs dist/); `npm test` builds before running mocha.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AMQP_URL, Broker, MANAGEMENT_URL, uniqueName, waitFor } from '../helpers/broker';
import { PostgresDatabase } from '../../src/lib/postgres';
import { DATABASE_URL } from '../helpers/private-stores';
import { freePort, NodeRedProcess, packPackage, PACKAGE, repoPackage, userDirWith } from '../helpers/node-red-process';
import { NODE_RED_RUNTIMES, type NodeRedRuntime } from './node-red-runtimes';

const NODE_TYPES = Object.keys(repoPackage['node-red'].nodes).sort();
/** The broker objects the example declares, by their name in examples/flows.json. */
const EXAMPLE_NAMES = ['main-exchange', 'main-queue', 'retry-exchange', 'retry-queue', 'parking-queue', 'reply-queue'] as const;
type ExampleName = (typeof EXAMPLE_NAMES)[number];
/** The broker objects of examples/async-web-service.json (queues derived from them are renamed with them). */
const ASYNC_NAMES = ['payments-exchange', 'payments-queue', 'payments-replies'] as const;
type AsyncName = (typeof ASYNC_NAMES)[number];
/** The broker objects and tables of examples/orders-outbox.json. */
const OUTBOX_NAMES = ['orders-exchange', 'orders-queue', 'demo_orders', 'rabbitmq_retry_outbox', 'rabbitmq_retry_dedupe'] as const;
type OutboxName = (typeof OUTBOX_NAMES)[number];
/** The broker objects of examples/downstream-outage.json. */
const OUTAGE_NAMES = ['outage-exchange', 'outage-queue'] as const;
type OutageName = (typeof OUTAGE_NAMES)[number];
/** One line per msg of the outage example's events output, written by a debug node the test adds. */
const OUTAGE_MARK = 'e2e-outage ';
interface OutageEvent {
  topic: string;
  payload: { state?: string; attempt?: number; reason?: string | null; kind?: string };
}

interface FlowNode {
  id: string;
  type: string;
  name?: string;
  [key: string]: unknown;
}

interface ModuleInfo {
  name: string;
  version: string;
  path: string;
  nodes: { types: string[]; enabled: boolean; err?: string }[];
}

/** One line the deployed copy of the `attempt` debug node writes to Node-RED's log. */
interface AttemptSeen {
  correlationId: string;
  amount: number;
  attempt: number;
}

const ATTEMPT_MARK = 'e2e-attempt ';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('example flow in a real Node-RED, installed from npm pack', function () {
  this.timeout(180_000);

  let packDir = '';
  let tarball = '';

  before(async function () {
    // The package as it would be published, packed once for every Node-RED version.
    packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    tarball = await packPackage(packDir);
  });

  after(function () {
    if (packDir) rmSync(packDir, { recursive: true, force: true });
  });

  for (const runtime of NODE_RED_RUNTIMES) describe(runtime.title, () => exampleFlowOn(runtime, () => tarball));
});

/** The scenario on one Node-RED version: fresh user dir, own broker object names, own process. */
function exampleFlowOn(runtime: NodeRedRuntime, packedTarball: () => string): void {
  let userDir = '';
  let red: NodeRedProcess | undefined;
  let broker: Broker;
  const names = {} as Record<ExampleName, string>;
  for (const n of EXAMPLE_NAMES) names[n] = uniqueName(`e2e-${n}`);
  const asyncNames = {} as Record<AsyncName, string>;
  for (const n of ASYNC_NAMES) asyncNames[n] = uniqueName(`e2e-${n}`);
  const outboxNames = {} as Record<OutboxName, string>;
  // Table names must be SQL identifiers: letters, digits and _.
  for (const n of OUTBOX_NAMES) outboxNames[n] = uniqueName(`e2e-${n}`).replace(/[^A-Za-z0-9_]/g, '_');
  const outageNames = {} as Record<OutageName, string>;
  for (const n of OUTAGE_NAMES) outageNames[n] = uniqueName(`e2e-${n}`);

  /** Node-RED's output so far, for failure messages. */
  const log = (): string => red?.log() ?? '';
  const output = (): string => red?.output ?? '';
  const getJson = (route: string): Promise<unknown> => red!.getJson(route);

  function attemptsSeen(): AttemptSeen[] {
    return (red?.lines() ?? [])
      .filter((line) => line.includes(ATTEMPT_MARK))
      .map((line) => JSON.parse(line.slice(line.indexOf(ATTEMPT_MARK) + ATTEMPT_MARK.length)) as AttemptSeen);
  }

  async function consumerCount(queue: string): Promise<number> {
    if (!(await broker.exists('queue', queue))) return -1;
    return (await (await broker.ch()).checkQueue(queue)).consumerCount;
  }

  async function count(queue: string): Promise<number> {
    return (await broker.exists('queue', queue)) ? broker.messageCount(queue) : -1;
  }

  before(async function () {
    // Node-RED 5's first run installs its toolchain (cached afterwards).
    this.timeout(runtime.prepareTimeoutMs + 120_000);
    const launch = await runtime.prepare();
    const tarball = packedTarball();
    assert.ok(tarball, 'the package was not packed');

    broker = await Broker.open();
    broker.track('queue', names['main-queue'], names['retry-queue'], names['parking-queue'], names['reply-queue']);
    broker.track('exchange', names['main-exchange'], names['retry-exchange']);
    const asyncQueues = [asyncNames['payments-queue'], asyncNames['payments-replies']];
    broker.track('queue', ...asyncQueues.flatMap((q) => [q, `${q}.retry`, `${q}.parking`]));
    broker.track('exchange', asyncNames['payments-exchange']);
    const ordersQueue = outboxNames['orders-queue'];
    broker.track('queue', ordersQueue, `${ordersQueue}.retry`, `${ordersQueue}.parking`);
    broker.track('exchange', outboxNames['orders-exchange']);
    const outageQueue = outageNames['outage-queue'];
    broker.track('queue', outageQueue, `${outageQueue}.retry`, `${outageQueue}.parking`);
    broker.track('exchange', outageNames['outage-exchange']);

    userDir = await userDirWith(tarball);
    // The management API as `npm start` gives it to the examples' brokers.
    red = await NodeRedProcess.start({ launch, userDir, env: { AMQP_URL, DATABASE_URL, RABBITMQ_MANAGEMENT_URL: MANAGEMENT_URL } });
  });

  after(async function () {
    await red?.stop();
    const db = new PostgresDatabase({ connectionString: DATABASE_URL });
    for (const table of ['demo_orders', 'rabbitmq_retry_outbox', 'rabbitmq_retry_dedupe'] as const) await db.query(`DROP TABLE IF EXISTS ${outboxNames[table]}`).catch(() => undefined);
    await db.close();
    // Node-RED is gone, so nothing redeclares them: delete every queue and exchange the flow used.
    await broker?.cleanup();
    if (userDir) rmSync(userDir, { recursive: true, force: true });
  });

  it(`is the expected Node-RED and Node.js (${runtime.nodeRedVersion.source}, ${runtime.nodeVersion.source})`, async function () {
    const settings = (await getJson('/settings')) as { version?: string };
    assert.match(String(settings.version), runtime.nodeRedVersion, `GET /settings reports Node-RED ${settings.version}${log()}`);
    const nodeLine = /Node\.js\s+version:\s*(v\S+)/.exec(output());
    assert.ok(nodeLine, `no Node.js version in the startup log${log()}`);
    assert.match(nodeLine[1]!, runtime.nodeVersion);
    const redLine = /Node-RED version:\s*v(\S+)/.exec(output());
    assert.equal(redLine?.[1], settings.version, `startup log and GET /settings disagree${log()}`);
  });

  it('loads every node type of package.json from the installed tarball, not from the repository', async function () {
    const mod = (await getJson(`/nodes/${PACKAGE}`)) as ModuleInfo;
    assert.equal(mod.name, PACKAGE);
    assert.equal(mod.version, repoPackage.version);
    assert.equal(path.resolve(mod.path), path.join(userDir, 'node_modules', PACKAGE));
    for (const set of mod.nodes) assert.equal(set.err, undefined, `node set ${set.types.join(',')} failed to load: ${set.err ?? ''}`);
    assert.deepEqual(mod.nodes.flatMap((set) => set.types).sort(), NODE_TYPES);
    assert.ok(mod.nodes.every((set) => set.enabled));

    const all = (await getJson('/nodes')) as { module: string; types: string[] }[];
    const registered = all.filter((set) => set.module === PACKAGE).flatMap((set) => set.types);
    assert.deepEqual(registered.sort(), NODE_TYPES);

    const examples = (await getJson('/library/examples/flows/')) as unknown[];
    assert.ok(examples.includes(PACKAGE), `Import ▸ Examples does not list ${PACKAGE}: ${JSON.stringify(examples)}`);
  });

  it('runs the example: good payments answered and acked, the poison one retried 3 times and parked', async function () {
    // The example as shipped in the tarball, with its broker objects renamed so no other run collides.
    let text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', 'flows.json'), 'utf8');
    for (const n of EXAMPLE_NAMES) assert.ok(text.includes(n), `the example no longer mentions ${n}`);
    const pattern = new RegExp(`\\b(${EXAMPLE_NAMES.join('|')})\\b`, 'g');
    text = text.replace(pattern, (n) => names[n as ExampleName]);
    const flow = JSON.parse(text) as FlowNode[];

    const byName = (type: string, name: string): FlowNode => {
      const found = flow.find((n) => n.type === type && n.name === name);
      assert.ok(found, `the example has no ${type} node named "${name}"`);
      return found;
    };
    const config = flow.find((n) => n.type === 'retry-config');
    assert.ok(config, 'the example has no retry-config node');
    assert.equal(config.maxAttempts, '3');
    config.retryDelay = '1000'; // the demo's 3 s TTL, shortened to keep the test quick
    // The `attempt` debug node also writes one parsable line per delivery to the log.
    const attemptDebug = byName('debug', 'attempt');
    attemptDebug.console = true;
    attemptDebug.targetType = 'jsonata';
    attemptDebug.complete = `"${ATTEMPT_MARK}" & $string({"correlationId": amqp.properties.correlationId, "amount": payload.amount, "attempt": retry.attempt})`;
    const good = byName('inject', 'publish good payment');
    const poison = byName('inject', 'publish poison payment');

    await red!.deploy(flow);

    await waitFor(async () => (await consumerCount(names['main-queue'])) === 1, `a consumer on ${names['main-queue']}${log()}`, 60_000);

    const inject = async (node: FlowNode): Promise<void> => {
      const response = await red!.api('POST', `/inject/${node.id}`);
      assert.equal(response.status, 200, `inject ${node.name ?? node.id}: ${response.status} ${await response.text()}`);
      await pause(20); // correlationIds are "good-" & $millis(): never two injects in the same millisecond
    };
    await inject(good);
    await inject(good);
    await inject(poison);

    const describeState = async (): Promise<string> =>
      `main ${await count(names['main-queue'])}, retry ${await count(names['retry-queue'])}, parking ${await count(names['parking-queue'])}, ` +
      `reply ${await count(names['reply-queue'])}; attempts seen ${JSON.stringify(attemptsSeen())}${log()}`;
    try {
      await waitFor(
        async () =>
          (await count(names['reply-queue'])) === 2 &&
          (await count(names['parking-queue'])) === 1 &&
          attemptsSeen().length >= 5,
        'two replies, one parked message and five deliveries',
        60_000,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}: ${await describeState()}`, { cause: err });
    }
    // The consumer settled everything: nothing waits in the main or retry queue.
    await waitFor(async () => (await count(names['main-queue'])) === 0 && (await count(names['retry-queue'])) === 0, 'empty main and retry queues', 30_000);

    // Deliveries as the `attempt` debug node saw them: good ones once, the poison one 3 times.
    const seen = attemptsSeen();
    const goodSeen = seen.filter((s) => s.correlationId.startsWith('good-'));
    const poisonSeen = seen.filter((s) => s.correlationId.startsWith('poison-'));
    assert.equal(goodSeen.length, 2, JSON.stringify(seen));
    assert.deepEqual(goodSeen.map((s) => [s.amount, s.attempt]), [[10.23, 1], [10.23, 1]]);
    assert.equal(new Set(poisonSeen.map((s) => s.correlationId)).size, 1, JSON.stringify(seen));
    assert.deepEqual(poisonSeen.map((s) => [s.amount, s.attempt]), [[210.23, 1], [210.23, 2], [210.23, 3]]);

    // Exactly two answers, one per good payment, with its correlationId.
    const replies = await broker.drain(names['reply-queue']);
    assert.equal(replies.length, 2);
    for (const r of replies) assert.deepEqual(JSON.parse(r.content.toString()), { status: 'ok' });
    const replyIds = replies.map((r) => String(r.properties.correlationId)).sort();
    assert.deepEqual(replyIds, goodSeen.map((s) => s.correlationId).sort());
    assert.ok(replyIds.every((id) => id.startsWith('good-')), JSON.stringify(replyIds));
    assert.equal(new Set(replyIds).size, 2, `correlationIds not distinct: ${JSON.stringify(replyIds)}`);

    // Exactly one parked message: the poison payment, with why and after how many attempts.
    const parked = await broker.drain(names['parking-queue']);
    assert.equal(parked.length, 1);
    const message = parked[0]!;
    assert.deepEqual(JSON.parse(message.content.toString()), { num: 1000, dbt: '1001001', krd: '1007222', amount: 210.23, remark: 'cash payment' });
    assert.equal(message.properties.correlationId, poisonSeen[0]!.correlationId);
    const headers = (message.properties.headers ?? {}) as Record<string, unknown>;
    const reason = String(headers['park-reason']);
    assert.ok(reason.includes('max attempts (3) reached'), reason);
    assert.ok(reason.includes('over the 100.00 limit'), reason);
    assert.equal(headers['retry-attempt'], 3);

    assert.equal(await count(names['main-queue']), 0);
    assert.equal(await count(names['retry-queue']), 0);
    const errors = output().split('\n').filter((line) => line.includes('[error]'));
    assert.deepEqual(errors, [], `Node-RED logged errors${log()}`);
  });

  it('serves what the example consumer did as Prometheus metrics at /rabbitmq-retry/metrics', async function () {
    const response = await red!.api('GET', '/rabbitmq-retry/metrics', undefined, { accept: 'text/plain' });
    const text = await response.text();
    assert.equal(response.status, 200, `${text}${log()}`);
    const consumed = (outcome: string, kind: string): string => `messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="${names['main-queue']}",outcome="${outcome}",kind="${kind}"}`;
    // The run above: two good payments acked, the poison one retried twice and parked (a retry-settle's failures are transient without error rules).
    for (const [outcome, kind, n] of [['acked', 'none', 2], ['retried', 'transient', 2], ['parked', 'transient', 1]] as const) {
      assert.ok(text.split('\n').includes(`${consumed(outcome, kind)} ${n}`), `no "${consumed(outcome, kind)} ${n}" in:\n${text}`);
    }
    assert.match(text, /# TYPE messaging_process_duration_seconds histogram/);
  });

  it('runs the async web service example over real HTTP: 202 {id} at once, then done or parked with the reason', async function () {
    // Importable from the menu: Import ▸ Examples lists it beside the retry demo.
    const listed = JSON.stringify(await getJson(`/library/examples/flows/${PACKAGE}`));
    assert.ok(listed.includes('async-web-service') && listed.includes('"flows"'), `Import ▸ Examples lists ${listed}`);
    let text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', 'async-web-service.json'), 'utf8');
    for (const n of ASYNC_NAMES) assert.ok(text.includes(n), `the async example no longer mentions ${n}`);
    text = text.replace(new RegExp(`\\b(${ASYNC_NAMES.join('|')})\\b`, 'g'), (n) => asyncNames[n as AsyncName]);
    await red!.deploy(JSON.parse(text) as unknown[]);
    await waitFor(
      async () => (await consumerCount(asyncNames['payments-queue'])) === 1 && (await consumerCount(asyncNames['payments-replies'])) === 1,
      `consumers on the payments and reply queues${log()}`,
      60_000,
    );

    const post = async (body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await fetch(`${red!.base}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const outcome = async (id: string): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await fetch(`${red!.base}/payments/${encodeURIComponent(id)}`);
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };

    const good = await post({ amount: 10.23 });
    const poison = await post({ amount: 210.23 });
    assert.equal(good.status, 202, JSON.stringify(good.json) + log());
    assert.equal(poison.status, 202, JSON.stringify(poison.json) + log());
    const goodId = String(good.json.id);
    const poisonId = String(poison.json.id);
    assert.notEqual(goodId, poisonId);
    assert.deepEqual(Object.keys(good.json), ['id']);

    const settled = async (id: string): Promise<Record<string, unknown>> => {
      let last: Record<string, unknown> = {};
      await waitFor(async () => {
        const r = await outcome(id);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        last = r.json;
        return last.status !== 'pending';
      }, `the outcome of ${id}${log()}`, 30_000);
      return last;
    };
    const done = await settled(goodId);
    assert.equal(done.status, 'done');
    assert.equal(done.amount, 10.23);
    const parked = await settled(poisonId);
    assert.equal(parked.status, 'parked');
    assert.equal(parked.reason, 'amount 210.23 is over the 100.00 limit');

    // The failure was parked once, never retried: the parking queue holds exactly it.
    const parkedMessages = await broker.drain(`${asyncNames['payments-queue']}.parking`);
    assert.equal(parkedMessages.length, 1);
    assert.equal(parkedMessages[0]!.properties.correlationId, poisonId);
    assert.equal(parkedMessages[0]!.properties.headers?.['retry-attempt'], 1);
    assert.equal(await count(`${asyncNames['payments-queue']}.retry`), 0);

    // Bad input and unknown ids are answered, not hung.
    assert.equal((await post({ amount: 'ten' })).status, 400);
    assert.equal((await outcome('no-such-id')).status, 404);
    const errors = output().split('\n').filter((line) => line.includes('[error]'));
    assert.deepEqual(errors, [], `Node-RED logged errors${log()}`);
  });

  it('runs the orders example over real HTTP: the order and its event in one transaction, relayed, processed once, done or parked', async function () {
    const listed = JSON.stringify(await getJson(`/library/examples/flows/${PACKAGE}`));
    assert.ok(listed.includes('orders-outbox'), `Import ▸ Examples lists ${listed}`);
    let text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', 'orders-outbox.json'), 'utf8');
    for (const n of OUTBOX_NAMES) assert.ok(text.includes(n), `the orders example no longer mentions ${n}`);
    text = text.replace(new RegExp(`\\b(${OUTBOX_NAMES.join('|')})\\b`, 'g'), (n) => outboxNames[n as OutboxName]);
    // Its own HTTP paths, beside the async example's.
    text = text.split('"/orders').join('"/e2e-orders');
    await red!.deploy(JSON.parse(text) as unknown[]);
    await waitFor(async () => (await consumerCount(outboxNames['orders-queue'])) === 1, `a consumer on the orders queue${log()}`, 60_000);
    // Its readiness probe: 200 once the broker, the consumer, the store, the database and the relay work.
    await waitFor(async () => (await fetch(`${red!.base}/e2e-orders-health`)).status === 200, `the health probe ready${log()}`, 60_000);

    const post = async (body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await fetch(`${red!.base}/e2e-orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const get = async (id: string): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await fetch(`${red!.base}/e2e-orders/${encodeURIComponent(id)}`);
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    // The orders table is created on deploy (an inject after 0.5 s): the first order may come before it.
    let good: { status: number; json: Record<string, unknown> } = { status: 0, json: {} };
    await waitFor(async () => (good = await post({ item: 'book', amount: 12.5 })).status === 201, `the first order accepted${log()}`, 30_000);
    const flaky = await post({ item: 'flaky', amount: 3 });
    const big = await post({ item: 'piano', amount: 5000 });
    for (const r of [flaky, big]) assert.equal(r.status, 201, JSON.stringify(r.json) + log());
    const settled = async (id: string): Promise<Record<string, unknown>> => {
      let last: Record<string, unknown> = {};
      await waitFor(async () => {
        const r = await get(id);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        last = r.json;
        return last.status !== 'pending';
      }, `the outcome of order ${id}${log()}`, 60_000);
      return last;
    };
    assert.deepEqual(await settled(String(good.json.id)), { id: good.json.id, item: 'book', amount: 12.5, status: 'done', reason: null });
    assert.equal((await settled(String(flaky.json.id))).status, 'done', 'the flaky order was retried and done');
    const parked = await settled(String(big.json.id));
    assert.equal(parked.status, 'parked');
    assert.equal(parked.reason, 'amount 5000 is over the 1000 limit');

    // Each event went out once, marked sent; each order processed once (deduplicated by the event id).
    const db = new PostgresDatabase({ connectionString: DATABASE_URL });
    try {
      const rows = (await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${outboxNames.rabbitmq_retry_outbox} GROUP BY status`)).rows;
      assert.deepEqual(rows, [{ status: 'sent', n: 3 }]);
      // A released key is no live claim (a release sets its lease to the past; the sweep deletes it later).
      const keys = (await db.query<{ state: string; n: number }>(`SELECT state, count(*)::int AS n FROM ${outboxNames.rabbitmq_retry_dedupe} WHERE state = 'done' OR expires_at > now() GROUP BY state`)).rows;
      assert.deepEqual(keys, [{ state: 'done', n: 2 }], 'the two done orders recorded as processed (the parked one released)');
    } finally {
      await db.close();
    }
    assert.equal((await post({ item: 7 })).status, 400);
    assert.equal((await get('no-such-order')).status, 404);
    const errors = output().split('\n').filter((line) => line.includes('[error]'));
    assert.deepEqual(errors, [], `Node-RED logged errors${log()}`);
  });

  it('runs the downstream outage example: the kill switch opens while the endpoint answers 503 and closes once it answers 200, a 400 is parked at once', async function () {
    const listed = JSON.stringify(await getJson(`/library/examples/flows/${PACKAGE}`));
    assert.ok(listed.includes('downstream-outage'), `Import ▸ Examples lists ${listed}`);
    let text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', 'downstream-outage.json'), 'utf8');
    for (const n of OUTAGE_NAMES) assert.ok(text.includes(n), `the outage example no longer mentions ${n}`);
    text = text.replace(new RegExp(`\\b(${OUTAGE_NAMES.join('|')})\\b`, 'g'), (n) => outageNames[n as OutageName]);
    const flow = JSON.parse(text) as FlowNode[];
    const queue = outageNames['outage-queue'];
    const byName = (type: string, name: string): FlowNode => {
      const found = flow.find((n) => n.type === type && n.name === name);
      assert.ok(found, `the outage example has no ${type} node named "${name}"`);
      return found;
    };
    // The endpoint is this Node-RED's own: its port through the tab's environment (the example reads PORT).
    const tab = flow.find((n) => n.type === 'tab')!;
    tab.env = [{ name: 'PORT', value: new URL(red!.base).port, type: 'str' }];
    const consumer = flow.find((n) => n.type === 'retry-consumer')!;
    assert.equal(consumer.circuit, true, 'the example has its kill switch on');
    // Shorter waits than a person watching needs.
    consumer.circuitRestart = '2';
    consumer.circuitRestartMax = '4';
    flow.find((n) => n.type === 'retry-config')!.retryDelay = '1000';
    // Every msg of the events output (acked, retried, parked, circuit) as one parsable line.
    const wires = consumer.wires as string[][];
    wires[1] = [...(wires[1] ?? []), 'e2e-outage-events'];
    flow.push({
      id: 'e2e-outage-events',
      type: 'debug',
      z: tab.id,
      name: 'e2e events',
      active: true,
      tosidebar: false,
      console: true,
      tostatus: false,
      complete: `"${OUTAGE_MARK}" & $string({"topic": topic, "payload": payload})`,
      targetType: 'jsonata',
      wires: [],
    });
    await red!.deploy(flow);
    await waitFor(async () => (await consumerCount(queue)) === 1, `a consumer on ${queue}${log()}`, 60_000);

    const events = (): OutageEvent[] =>
      (red?.lines() ?? []).filter((line) => line.includes(OUTAGE_MARK)).map((line) => JSON.parse(line.slice(line.indexOf(OUTAGE_MARK) + OUTAGE_MARK.length)) as OutageEvent);
    const of = (topic: string): OutageEvent[] => events().filter((e) => e.topic === topic);
    const circuit = (): string[] => of('circuit').map((e) => String(e.payload.state));
    const inject = async (name: string): Promise<void> => {
      const node = byName('inject', name);
      const response = await red!.api('POST', `/inject/${node.id}`);
      assert.equal(response.status, 200, `inject ${name}: ${response.status} ${await response.text()}`);
    };
    const state = async (): Promise<string> => `events ${JSON.stringify(events())}; main ${await count(queue)}, retry ${await count(`${queue}.retry`)}, parking ${await count(`${queue}.parking`)}${log()}`;
    const until = async (condition: () => boolean | Promise<boolean>, what: string): Promise<void> => {
      try {
        await waitFor(condition, what, 60_000);
      } catch (err) {
        throw new Error(`${(err as Error).message}: ${await state()}`, { cause: err });
      }
    };

    // The service is down: every call fails with 503 (transient), the kill switch opens, nothing is parked.
    await inject('endpoint answers 503');
    await inject('publish 10 jobs');
    await until(() => circuit().includes('open'), 'the kill switch to open');
    const shown = await red!.status(consumer.id);
    assert.match(shown?.text ?? '', /circuit (open|probing)/, `status ${JSON.stringify(shown)}${await state()}`);
    // The service is back: a probe succeeds, the kill switch closes, every job is done, none parked.
    await inject('endpoint answers 200');
    await until(() => circuit().at(-1) === 'closed' && of('acked').length === 10, 'the kill switch to close and the 10 jobs to be acked');
    assert.ok(of('retried').length > 0, `no job was retried while the service was down${await state()}`);
    assert.deepEqual(of('parked'), [], `a job was parked during the outage${await state()}`);
    // A bad request: 400 is permanent, each job parked at once after one attempt, and the kill switch stays closed.
    await inject('endpoint answers 400');
    await inject('publish 10 jobs');
    await until(async () => (await count(`${queue}.parking`)) === 10, '10 jobs parked');
    const parked = await broker.drain(`${queue}.parking`);
    for (const m of parked) {
      const headers = (m.properties.headers ?? {}) as Record<string, unknown>;
      assert.equal(headers['park-error-kind'], 'permanent', JSON.stringify(headers));
      assert.equal(headers['retry-attempt'], 1, JSON.stringify(headers));
      assert.match(String(headers['park-reason']), /^permanent \(HTTP client error\): HTTP 400/, JSON.stringify(headers));
    }
    assert.equal(circuit().at(-1), 'closed', await state());
    assert.equal(of('retried').filter((e) => e.payload.kind === 'permanent').length, 0, await state());
    assert.equal(await count(`${queue}.retry`), 0);
    const errors = output().split('\n').filter((line) => line.includes('[error]'));
    assert.deepEqual(errors, [], `Node-RED logged errors${log()}`);

    // Node-RED on another port than the example calls: nothing answers there (a port free a moment ago). Each refused call is
    // settled once (retried, ECONNREFUSED is transient), and the flow says once where it called.
    const closed = await freePort();
    tab.env = [{ name: 'PORT', value: String(closed), type: 'str' }];
    await inject('endpoint answers 200');
    await red!.deploy(flow);
    await waitFor(async () => (await consumerCount(queue)) === 1, `a consumer on ${queue} again${log()}`, 60_000);
    const retriedBefore = of('retried').length;
    await inject('publish 10 jobs');
    await until(() => of('retried').length >= retriedBefore + 5, 'refused calls retried');
    const lines = output().split('\n');
    const hints = lines.filter((line) => line.includes(`nothing answers at http://127.0.0.1:${closed}/outage-endpoint`));
    assert.equal(hints.length, 1, `the flow says once that nothing answers${log()}`);
    assert.deepEqual(
      lines.filter((line) => line.includes('was already settled')),
      [],
      `a refused call was settled twice (the http request node's error went to its output and to the catch node)${log()}`,
    );
  });

  it("compares queue arguments through RABBITMQ_MANAGEMENT_URL: the example's consumer in check mode is not 'args unchecked'", async function () {
    // The demo again (its topology exists from the first run), now checking instead of declaring.
    let text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', 'flows.json'), 'utf8');
    text = text.replace(new RegExp(`\\b(${EXAMPLE_NAMES.join('|')})\\b`, 'g'), (n) => names[n as ExampleName]);
    const flow = JSON.parse(text) as FlowNode[];
    const brokerNode = flow.find((n) => n.type === 'retry-broker');
    assert.equal(brokerNode?.managementUrl, '${RABBITMQ_MANAGEMENT_URL}', 'the example takes the management API from the environment');
    const config = flow.find((n) => n.type === 'retry-config')!;
    config.mode = 'check';
    config.retryDelay = '1000'; // as the first run declared it
    const consumer = flow.find((n) => n.type === 'retry-consumer')!;
    await red!.deploy(flow);
    await waitFor(async () => (await consumerCount(names['main-queue'])) === 1, `a consumer on ${names['main-queue']}${log()}`, 60_000);
    let shown: { text?: string; fill?: string } | undefined;
    await waitFor(async () => /✓/.test((shown = await red!.status(consumer.id))?.text ?? ''), `the consumer's counters on its status${log()}`, 30_000).catch(() => undefined);
    assert.match(shown?.text ?? '', /✓/, `status ${JSON.stringify(shown)}${log()}`);
    assert.doesNotMatch(shown?.text ?? '', /args unchecked/, `status ${JSON.stringify(shown)}${log()}`);
    assert.equal(shown?.fill, 'green', `status ${JSON.stringify(shown)}${log()}`);
    assert.ok(!log().includes('RABBITMQ_MANAGEMENT_URL}: environment variable not set'), `the variable set: no fallback${log()}`);
  });
}
