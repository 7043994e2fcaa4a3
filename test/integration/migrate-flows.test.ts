/**
 * Issue 41: the example flows of the other Node-RED AMQP packages (test/fixtures/migrate), converted
 * and deployed in a real Node-RED runtime against the real broker, where the old package's topology
 * already exists (declared here as the old package declared it — a redeclare with this package's
 * arguments would be refused with a 406): messages are consumed and acked, a failing one is retried
 * and parked, and nothing is redeclared.
 *
 * Test setup, not conversion: the examples select no broker (the user picks one), so each gets an old
 * broker node pointing at the test broker, with the test broker's credentials as flows_cred.json would
 * hold them; their names are made unique; delays of the examples are shortened; the old nodes the
 * converter keeps (RPC, headers exchange, dynamic queues) are left out of the deploy, the old package
 * not being installed here; the retry delay is 300 ms instead of 5 s.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { convertFlows, type ConvertOptions, type ConvertResult, type FlowNode } from '../../src/migrate';
import { planTopology, declareTopology, inspectTopology, TopologyError, type ChannelRunner } from '../../src/lib/topology';
import { topologyFromDefinition } from '../../src/nodes/shared/topology-definition';
import { AMQP_URL, Broker, uniqueName, waitFor } from '../helpers/broker';
import { coreNodes, helper, loadFlow, logLines, packageNodes } from '../helpers/node-red';

type Msg = Record<string, any>;
const FIXTURES = path.resolve(__dirname, '../fixtures/migrate');
const core = path.dirname(require.resolve('@node-red/nodes/package.json'));
/* eslint-disable @typescript-eslint/no-require-imports -- Node-RED node modules are CommonJS functions */
const exampleNodes: unknown[] = [
  ...packageNodes,
  ...coreNodes.filter((m) => m !== require(path.join(core, 'core/common/25-catch.js'))),
  require(path.join(core, 'core/function/10-switch.js')),
  require(path.join(core, 'core/function/89-delay.js')),
  // catch and complete: the test helper loads them itself for a flow that has them.
];
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The test helper loads catch and complete itself for a flow that has them, once per such node: a
 * flow with two complete nodes would register the type twice. Once per runtime here, while this
 * file's tests run (the other files list catch themselves: the wrapper must not outlive these).
 */
function loadOncePerRuntime(type: string): () => void {
  const modules = (helper as unknown as { _nodeModules: Record<string, (red: object) => unknown> })._nodeModules;
  const load = modules[type];
  if (!load) return () => undefined;
  const loaded = new WeakSet();
  modules[type] = (red) => {
    if (loaded.has(red)) return undefined;
    loaded.add(red);
    return load(red);
  };
  return () => {
    modules[type] = load;
  };
}

const url = new URL(AMQP_URL);

/** A package's example flows as one flows file, names made unique, each AMQP node on one old broker node. */
function examples(dir: string, renames: Record<string, string>, broker: FlowNode): FlowNode[] {
  const files = readdirSync(path.join(FIXTURES, dir)).filter((f) => f.endsWith('.json'));
  let text = JSON.stringify(files.flatMap((f) => JSON.parse(readFileSync(path.join(FIXTURES, dir, f), 'utf8')) as FlowNode[]));
  for (const [from, to] of Object.entries(renames)) text = text.split(JSON.stringify(from).slice(1, -1)).join(to);
  const nodes = (JSON.parse(text) as FlowNode[]).filter((n) => !['amqp-broker', 'amqp-server'].includes(n.type));
  for (const n of nodes) {
    if ('broker' in n) n.broker = broker.id;
    if ('server' in n) n.server = broker.id;
    if (n.type === 'delay') n.timeout = '0.1';
  }
  return [broker, ...nodes];
}

/** The converted flow as deployed: only the nodes Node-RED has here (the kept old ones need the old package). */
function deployable(result: ConvertResult, flows: FlowNode[]): FlowNode[] {
  const oldTypes = new Set(flows.filter((n) => /^amqp/.test(n.type)).map((n) => n.type));
  return result.flows
    .filter((n) => !oldTypes.has(n.type))
    .map((n) => (n.type === 'retry-config' ? { ...n, retryDelay: '300' } : n))
    .map((n) => ({ ...n, wires: n.wires?.map((port) => port.filter((id) => result.flows.some((m) => m.id === id && !oldTypes.has(m.type)))) }));
}

async function convertAndDeploy(flows: FlowNode[], credentials: ConvertOptions['credentials'], options: ConvertOptions = {}): Promise<ConvertResult> {
  const result = convertFlows(flows, { credentials, ...options });
  for (const n of result.flows) assert.ok(!/^amqp/.test(n.type) || result.report.some((e) => e.id === n.id && e.outcome === 'kept'), `${n.type} ${n.id} is converted or reported kept`);
  await loadFlow(deployable(result, flows), exampleNodes, result.credentials);
  return result;
}

/** The queues a converted flow's retry configurations use (to wait for and clean up). */
function queuesOf(result: ConvertResult): string[] {
  return result.flows.filter((n) => n.type === 'retry-config').flatMap((n) => [String(n.mainQueue), `${String(n.mainQueue)}.retry`, `${String(n.mainQueue)}.parking`]);
}

/** The queue still has the arguments the old package gave it (queue arguments cannot change: a declare with others is refused). */
async function keepsArguments(broker: Broker, name: string, args: Record<string, unknown>): Promise<void> {
  const ch = await broker.ch();
  await ch.assertQueue(name, { durable: true, arguments: args });
}

/** A redeclare of the queue with this package's own arguments (declare mode) is refused: the 406 check mode avoids. */
async function redeclareIsRefused(result: ConvertResult, queue: string): Promise<void> {
  const config = result.flows.find((n) => n.type === 'retry-config' && n.mainQueue === queue);
  assert.ok(config, `a retry-config on ${queue}`);
  const plan = planTopology({ ...topologyFromDefinition({ ...config, mode: 'declare', existingQueue: false }) });
  const broker = await Broker.open();
  try {
    await assert.rejects(
      declareTopology(runnerOn(broker), plan),
      (err: unknown) => err instanceof TopologyError && err.code === 406,
    );
  } finally {
    await broker.model.close();
  }
}

/** A channel runner on a broker connection, as the dialog's check uses (a 404 closes the channel). */
function runnerOn(broker: Broker): ChannelRunner {
  return async (work) => {
    const ch = await broker.model.createChannel();
    ch.on('error', () => undefined);
    try {
      return await work(ch);
    } finally {
      await ch.close().catch(() => undefined);
    }
  };
}

describe('the dialog\'s check of an existing main queue configuration (real broker)', function () {
  it('says its own retry and parking queues are created at deploy, not that check mode never creates them', async function () {
    const broker = await Broker.open();
    const queue = uniqueName('existing');
    try {
      await (await broker.ch()).assertQueue(queue, { durable: true, arguments: { 'x-max-length': 1000 } });
      broker.track('queue', queue);
      const plan = planTopology(topologyFromDefinition({ mode: 'check', existingQueue: true, mainQueue: queue, retryDelay: '5000', maxAttempts: 3 }));
      const inspection = await inspectTopology(runnerOn(broker), plan);
      assert.deepEqual(inspection.objects.map((o) => [o.name, o.state]), [[queue, 'ok'], [`${queue}.retry`, 'missing'], [`${queue}.parking`, 'missing']]);
      assert.deepEqual(inspection.objects.flatMap((o) => o.problems), [`queue '${queue}.retry' does not exist yet: deploying creates it`, `queue '${queue}.parking' does not exist yet: deploying creates it`]);
    } finally {
      await broker.cleanup();
    }
  });
});

describe('converted flows of the other AMQP packages in Node-RED (real broker)', function () {
  let restore: Array<() => void> = [];
  before(() => {
    restore = [loadOncePerRuntime('catch'), loadOncePerRuntime('complete')];
  });
  after(() => {
    for (const r of restore) r();
  });
  this.timeout(90_000);
  let broker: Broker;

  beforeEach(async () => {
    broker = await Broker.open();
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  for (const pkg of ['meowwolf', 'frankvdb'] as const) {
    it(`${pkg}: its examples consume and ack, a nacked message is retried and parked, the existing queue untouched`, async function () {
      const queue = uniqueName(`${pkg}-queue`);
      const exchange = uniqueName(`${pkg}-exchange`);
      const old: FlowNode = { id: 'old-broker', type: 'amqp-broker', name: 'rabbit', host: url.hostname, port: Number(url.port || 5672), vhost: decodeURIComponent(url.pathname.slice(1)), tls: false, credsFromSettings: false };
      const flows = examples(pkg, { 'test-direct-queue': queue, 'test-direct-exchange': exchange }, old);
      // The old package's topology, as it declared it (FrankVDB: a quorum queue).
      const ch = await broker.ch();
      const args = pkg === 'frankvdb' ? { 'x-queue-type': 'quorum' } : {};
      await ch.assertQueue(queue, { durable: true, exclusive: false, autoDelete: false, arguments: args });
      await ch.assertExchange(exchange, 'direct', { durable: true });
      broker.track('queue', queue);
      broker.track('exchange', exchange);

      const result = await convertAndDeploy(flows, { 'old-broker': { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } });
      broker.track('queue', ...queuesOf(result));
      assert.deepEqual(Object.keys(result.credentials), ['old-broker']);
      await redeclareIsRefused(result, queue);

      // The direct exchange example: its consumer (a temporary queue before, now durable) acks on arrival.
      const direct = result.flows.find((n) => n.type === 'retry-consumer' && result.flows.some((c) => c.id === n.config && c.mainExchange === 'amq.direct'));
      assert.ok(direct);
      const seen: Msg[] = [];
      helper.getNode(direct.id).on('input', () => undefined);
      helper.getNode('88ed2319.87f56').on('input', (msg: Msg) => seen.push(msg));
      for (const q of queuesOf(result)) await waitFor(() => broker.exists('queue', q), `queue ${q}`).catch((err: unknown) => { console.log(logLines().join('\n')); throw err; });
      await broker.waitForConsumer(queue);
      await broker.publish('amq.direct', 'new-routing-key', { data: 'the payload' });
      await waitFor(() => seen.length === 1, 'the direct example\'s message at its debug node');
      assert.deepEqual(seen[0]?.payload, { data: 'the payload' });

      // The manual nack example: the message goes round its flow, is nacked each time, retried, then parked.
      await broker.publish('', queue, { order: 1 });
      const parked = await broker.take(`${queue}.parking`, 60_000);
      assert.deepEqual(JSON.parse(parked.content.toString()), { order: 1 });
      assert.equal(parked.properties.headers?.['retry-attempt'], 3);
      await waitFor(async () => (await broker.messageCount(queue)) === 0, 'the main queue empty (every delivery settled)');
      // Nothing redeclared: the queue keeps the arguments the old package gave it.
      await keepsArguments(broker, queue, args);

      // The manual ack examples: msg.manualAck (through link nodes, or a complete node) acks.
      const acked: Record<string, number> = { '1129b47c.81b8dc': 0, '42a93135.4cad3': 0 };
      for (const id of Object.keys(acked)) helper.getNode(`${id}-ack`).on('input', () => (acked[id] = (acked[id] ?? 0) + 1));
      await broker.publish('amq.topic', 'acked.with.link', { data: 'link' });
      await broker.publish('amq.topic', 'acked.with.complete', { data: 'complete' });
      await waitFor(() => Object.values(acked).every((n) => n === 1), 'both manual acks');
      // Stopped: a delivery left unacked would be ready again; acked ones are gone.
      await helper.unload();
      for (const id of Object.keys(acked)) assert.equal(await broker.messageCount(`migrated.${id}`), 0, `migrated.${id} empty`);
    });
  }

  it('node-red-contrib-amqp (abreits): a queue consumer acks at its flow\'s end, a throw is retried and parked (--settle-at-end)', async function () {
    const queue = uniqueName('abreits-orders');
    const events = uniqueName('abreits-events');
    const old: FlowNode = { id: 'old-server', type: 'amqp-server', host: url.hostname, port: String(url.port || 5672), vhost: decodeURIComponent(url.pathname.slice(1)), keepalive: '30', usetls: false, verifyservercert: true, usetopology: false, topology: '{}' };
    const flows = examples('abreits', { 'abreits.orders': queue, 'abreits.events': events }, old);
    // amqp-ts declared a durable queue and a durable topic exchange.
    const ch = await broker.ch();
    await ch.assertQueue(queue, { durable: true });
    await ch.assertExchange(events, 'topic', { durable: true });
    broker.track('queue', queue);
    broker.track('exchange', events);

    const result = await convertAndDeploy(flows, { 'old-server': { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } }, { autoAck: 'settle-at-end' });
    broker.track('queue', ...queuesOf(result));
    await redeclareIsRefused(result, queue);
    const seen: Msg[] = [];
    helper.getNode('abr.debug').on('input', (msg: Msg) => seen.push(msg));
    for (const q of queuesOf(result)) await waitFor(() => broker.exists('queue', q), `queue ${q}`);
    await broker.waitForConsumer(queue);

    await broker.publish('', queue, { order: 1 });
    await broker.publish(events, 'order.created', { event: 1 });
    await waitFor(() => seen.length >= 2, 'both messages at the debug node');
    await broker.publish('', queue, { fail: true });
    const parked = await broker.take(`${queue}.parking`, 60_000);
    assert.deepEqual(JSON.parse(parked.content.toString()), { fail: true });
    await waitFor(async () => (await broker.messageCount(queue)) === 0, 'the main queue empty');
    assert.equal(await broker.messageCount(`${queue}.parking`), 0, 'only the failing message was parked');
    await keepsArguments(broker, queue, {});
  });

  it('node-red-contrib-amqp-ack: amqp ack acks, amqp ack (nack) retries and parks', async function () {
    const queue = uniqueName('ack-jobs');
    const old: FlowNode = { id: 'old-server', type: 'amqp-server', host: url.hostname, port: String(url.port || 5672), vhost: decodeURIComponent(url.pathname.slice(1)), keepalive: '30', usetls: false, verifyservercert: true, useca: false, ca: '', usetopology: false, topology: '{}', prefetch: true, prefetchvalue: '5', prefetchack: false, prefetchvalueack: '10' };
    const flows = examples('amqp-ack', { 'ack.jobs': queue }, old);
    const ch = await broker.ch();
    await ch.assertQueue(queue, { durable: true });
    broker.track('queue', queue);

    const result = await convertAndDeploy(flows, { 'old-server': { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } });
    broker.track('queue', ...queuesOf(result));
    await redeclareIsRefused(result, queue);
    const acked: Msg[] = [];
    helper.getNode('ack.debug').on('input', (msg: Msg) => acked.push(msg));
    for (const q of queuesOf(result)) await waitFor(() => broker.exists('queue', q), `queue ${q}`);
    await broker.waitForConsumer(queue);

    await broker.publish('', queue, { job: 1 });
    await waitFor(() => acked.length === 1, 'the job acked and passed on');
    await broker.publish('', queue, { fail: true });
    const parked = await broker.take(`${queue}.parking`, 60_000);
    assert.deepEqual(JSON.parse(parked.content.toString()), { fail: true });
    await waitFor(async () => (await broker.messageCount(queue)) === 0, 'the main queue empty');
    await keepsArguments(broker, queue, {});
  });
});
