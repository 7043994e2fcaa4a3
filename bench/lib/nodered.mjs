/**
 * The Node-RED side of the benchmark: node-red-node-test-helper's runtime (the real
 * @node-red/runtime flow engine of the installed node-red) loading the package's compiled nodes from
 * dist/, as test/helpers/node-red.ts does, plus a few trivial bench nodes.
 *
 * The test helper wraps Node.prototype.send/status/log/... and RED.log.log in sinon spies that record
 * every call (with its msg and a stack trace) until unload, and emit a `call:*` event per call on
 * nextTick. That is test instrumentation, not Node-RED: by default it is removed right after the flow
 * is loaded (including the copies of the spied `send` Node-RED puts on each wired node), so the
 * runtime behaves like a deployed Node-RED (asynchronous delivery, hooks, metrics checks, cloning).
 * `spies: true` keeps it, to show what it costs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const helper = require('node-red-node-test-helper');
helper.init(require.resolve('node-red'));
// Errors only: the nodes' info lines ("connected to ...") and the helper's deprecation warning on every load would drown the progress.
helper._RED.log.init({ logging: { console: { level: process.env.BENCH_NR_LOG ?? 'error', metrics: false, audit: false } } });

export const versions = {
  nodeRed: require('node-red/package.json').version,
  testHelper: require('node-red-node-test-helper/package.json').version,
  // amqplib's "exports" hides its package.json: read it next to its entry point.
  amqplib: JSON.parse(readFileSync(path.join(path.dirname(require.resolve('amqplib')), 'package.json'), 'utf8')).version,
};

/** The compiled package: dist/, or BENCH_DIST (another build of it, e.g. to compare a change). */
export const distRoot = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(root, 'dist');
const dist = path.join(distRoot, 'nodes');

export const RUNTIME_DESCRIPTION = `node-red-node-test-helper ${versions.testHelper} runtime (Node-RED ${versions.nodeRed} @node-red/runtime, asynchronous delivery), package nodes from ${path.relative(root, distRoot) || '.'}/, the helper's sinon spies removed after load`;

let loaded;
/**
 * The package's nodes, compiled: what ships. Required once (run.mjs does it at start), so a build
 * another process starts meanwhile (`npm test` cleans dist/) cannot pull files from under a run.
 */
export function packageNodes() {
  loaded ??= ['retry-broker', 'retry-config', 'retry-consumer', 'retry-settle', 'park-publisher', 'retry-publish'].map((n) => require(path.join(dist, n, `${n}.js`)));
  return loaded;
}

/** The package's ConsumerSession class (dist/lib), for the runs without Node-RED. */
export function consumerSessionClass() {
  return require(path.join(distRoot, 'lib/consumer-session.js')).ConsumerSession;
}

/** Hooks the bench nodes call; set by the scenario that runs. */
export const benchHooks = { onRoute: undefined, onSink: undefined };

/**
 * Trivial nodes for the flows and for measuring Node-RED's own cost:
 * - bench-route: a user's decision node: attempt 1 → output 2 (retry), later attempts → output 1 (ack);
 * - bench-sink: calls done();
 * - bench-source: the bench calls node.emitMsg(msg) to send.
 */
export function benchNodes(RED) {
  function BenchRoute(def) {
    RED.nodes.createNode(this, def);
    this.on('input', (msg, send, done) => {
      if (benchHooks.onRoute) benchHooks.onRoute(msg);
      if (msg.retry && msg.retry.attempt > 1) send([msg, null]);
      else send([null, msg]);
      done();
    });
  }
  function BenchSink(def) {
    RED.nodes.createNode(this, def);
    this.on('input', (msg, _send, done) => {
      if (benchHooks.onSink) benchHooks.onSink(msg, this.id);
      done();
    });
  }
  function BenchSource(def) {
    RED.nodes.createNode(this, def);
    const node = this;
    node.emitMsg = (msg) => node.send(msg);
  }
  RED.nodes.registerType('bench-route', BenchRoute);
  RED.nodes.registerType('bench-sink', BenchSink);
  RED.nodes.registerType('bench-source', BenchSource);
}

/**
 * Removes the helper's spies. Restoring the prototype is not enough: Node-RED copies
 * `Node.prototype.send` into every wired node when it is built (Node.updateWires), so each node
 * already holds the spied send, which would record every msg sent (a stack trace and the msg, kept
 * until unload: hundreds of MB over 200 000 msgs). Those copies are put back too.
 */
function despy(flow) {
  helper._logSpy?.restore();
  helper._sandbox.restore();
  const send = helper._NodePrototype.send;
  for (const def of flow) {
    const node = helper.getNode(def.id);
    if (node && node._wireCount > 0 && node.send !== send) node.send = send;
  }
}

/** Loads a flow; nodes on a tab get a position (a node without one is taken for a config node). */
export async function loadFlow(flow, { spies = false, syncDelivery = false } = {}) {
  const positioned = flow.map((n) => (n.z !== undefined && n.x === undefined ? { x: 100, y: 100, ...n } : n));
  // Node-RED's settings.js `runtimeSyncDelivery` (default false: every msg is delivered in its own
  // setImmediate). The flow engine reads it when flows are (re)loaded, so it applies to this flow only.
  const settings = helper._settings;
  if (syncDelivery) helper.settings({ runtimeSyncDelivery: true });
  try {
    await helper.load([...packageNodes(), benchNodes], positioned);
  } finally {
    helper._settings = settings;
  }
  if (!spies) despy(positioned);
}

export async function unloadFlow() {
  await helper.unload();
}

export function getNode(id) {
  return helper.getNode(id);
}

// Flow building blocks --------------------------------------------------------------------------

export function tab() {
  return { id: 'flow', type: 'tab', label: 'bench' };
}

export function brokerNode(url) {
  return { id: 'broker', type: 'retry-broker', name: 'bench broker', url, heartbeat: '30', reconnectMax: '30', managementUrl: '' };
}

/** A per-queue retry topology (retry exchange '', default exchange), declared by the package. */
export function configNode(names, extra = {}) {
  return {
    id: 'config',
    type: 'retry-config',
    broker: 'broker',
    mode: 'declare',
    mainExchange: '',
    mainExchangeType: 'direct',
    mainQueue: names.mainQueue,
    routingKeys: '',
    retryExchange: '',
    retryExchangeType: 'fanout',
    retryQueue: names.retryQueue,
    retryDelay: '200',
    parkingQueue: names.parkingQueue,
    maxAttempts: '3',
    mainQueueArgs: '{}',
    retryQueueArgs: '{}',
    parkingQueueArgs: '{}',
    ...extra,
  };
}

export function consumerNode(wires, prefetch, extra = {}) {
  return {
    id: 'consumer',
    type: 'retry-consumer',
    z: 'flow',
    config: 'config',
    prefetch: String(prefetch),
    settleTimeout: '60',
    decode: 'auto',
    invalidBody: 'park',
    wires,
    ...extra,
  };
}
