/**
 * The Node-RED side of the benchmark: node-red-node-test-helper's runtime (the real
 * @node-red/runtime flow engine of the installed node-red) loading the package's compiled nodes, as
 * test/helpers/node-red.ts does, plus a few trivial bench nodes.
 *
 * The test helper wraps Node.prototype.send/status/log/... and RED.log.log in sinon spies that record
 * every call (with its msg and a stack trace) until unload, and emit a `call:*` event per call on
 * nextTick. That is test instrumentation, not Node-RED: by default it is removed right after the flow
 * is loaded (including the copies of the spied `send` Node-RED puts on each wired node), so the
 * runtime behaves like a deployed Node-RED (asynchronous delivery, hooks, metrics checks, cloning).
 * `spies: true` keeps it, to show what it costs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { helper, packageNodesFrom } from '../../test/helpers/node-red';

const root = path.resolve(__dirname, '../..');

/** What the bench touches of the test helper beyond its typed API. */
interface HelperInternals {
  _RED: { log: { init(settings: Record<string, unknown>): void } };
  _settings: Record<string, unknown>;
  _sandbox: { restore(): void };
  _logSpy?: { restore(): void };
  _NodePrototype: { send: unknown };
  settings(settings: Record<string, unknown>): void;
}
const internals = helper as unknown as HelperInternals;
type TestNode = ReturnType<typeof helper.getNode>;

// Errors only: the nodes' info lines ("connected to ...") and the helper's deprecation warning on every load would drown the progress.
internals._RED.log.init({ logging: { console: { level: process.env.BENCH_NR_LOG ?? 'error', metrics: false, audit: false } } });

const readVersion = (file: string): string => (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;

export const versions = {
  nodeRed: readVersion(require.resolve('node-red/package.json')),
  testHelper: readVersion(require.resolve('node-red-node-test-helper/package.json')),
  // amqplib's "exports" hides its package.json: read it next to its entry point.
  amqplib: readVersion(path.join(path.dirname(require.resolve('amqplib')), 'package.json')),
};

/** The compiled package: dist/, or BENCH_DIST (another build of it, e.g. to compare a change). */
export const distRoot = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(root, 'dist');

export const RUNTIME_DESCRIPTION = `node-red-node-test-helper ${versions.testHelper} runtime (Node-RED ${versions.nodeRed} @node-red/runtime, asynchronous delivery), package nodes from ${path.relative(root, distRoot) || '.'}/, the helper's sinon spies removed after load`;

let loaded: unknown[] | undefined;
/**
 * The package's nodes, compiled: what ships. Required once (run.ts does it at start), so a build
 * another process starts meanwhile (`npm test` cleans dist/) cannot pull files from under a run.
 */
export function packageNodes(): unknown[] {
  loaded ??= packageNodesFrom(distRoot);
  return loaded;
}

/** A module of the package's dist/lib (for the runs without Node-RED). */
export function distLib(name: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- compiled CommonJS of the build under test
  return require(path.join(distRoot, 'lib', `${name}.js`));
}

/** A Node-RED msg as the bench sees it: plain data. */
export type Msg = Record<string, any>;

/** Hooks the bench nodes call; set by the scenario that runs. */
export const benchHooks: {
  onRoute: ((msg: Msg) => void) | undefined;
  onSink: ((msg: Msg, id: string) => void) | undefined;
  /** bench-call's input handler. */
  onInput: ((msg: Msg, send: (msg: Msg) => void, done: (err?: Error) => void) => void) | undefined;
} = { onRoute: undefined, onSink: undefined, onInput: undefined };

interface BenchRED {
  nodes: { createNode(node: object, def: object): void; registerType(type: string, ctor: (this: BenchNode, def: object) => void): void };
}
interface BenchNode {
  id: string;
  on(event: 'input', listener: (msg: Msg, send: (msgs: Msg | Array<Msg | null>) => void, done: (err?: Error) => void) => void): void;
  send(msg: Msg): void;
  emitMsg?: (msg: Msg) => void;
}

/**
 * Trivial nodes for the flows and for measuring Node-RED's own cost:
 * - bench-route: a user's decision node: attempt 1 → output 2 (retry), later attempts → output 1 (ack);
 * - bench-sink: calls done();
 * - bench-source: the bench calls node.emitMsg(msg) to send;
 * - bench-call: its input is handled by `benchHooks.onInput` (the bench's own code run as a node).
 */
export function benchNodes(RED: BenchRED): void {
  function BenchRoute(this: BenchNode, def: object): void {
    RED.nodes.createNode(this, def);
    this.on('input', (msg, send, done) => {
      if (benchHooks.onRoute) benchHooks.onRoute(msg);
      if (msg.retry && msg.retry.attempt > 1) send([msg, null]);
      else send([null, msg]);
      done();
    });
  }
  function BenchSink(this: BenchNode, def: object): void {
    RED.nodes.createNode(this, def);
    this.on('input', (msg, _send, done) => {
      if (benchHooks.onSink) benchHooks.onSink(msg, this.id);
      done();
    });
  }
  function BenchSource(this: BenchNode, def: object): void {
    RED.nodes.createNode(this, def);
    const node = this;
    node.emitMsg = (msg) => node.send(msg);
  }
  function BenchCall(this: BenchNode, def: object): void {
    RED.nodes.createNode(this, def);
    this.on('input', (msg, send, done) => {
      if (benchHooks.onInput) benchHooks.onInput(msg, send, done);
      else done(new Error('bench-call: no benchHooks.onInput'));
    });
  }
  RED.nodes.registerType('bench-route', BenchRoute);
  RED.nodes.registerType('bench-call', BenchCall);
  RED.nodes.registerType('bench-sink', BenchSink);
  RED.nodes.registerType('bench-source', BenchSource);
}

export type FlowNode = Record<string, unknown>;

/**
 * Removes the helper's spies. Restoring the prototype is not enough: Node-RED copies
 * `Node.prototype.send` into every wired node when it is built (Node.updateWires), so each node
 * already holds the spied send, which would record every msg sent (a stack trace and the msg, kept
 * until unload: hundreds of MB over 200 000 msgs). Those copies are put back too.
 */
function despy(flow: FlowNode[]): void {
  internals._logSpy?.restore();
  internals._sandbox.restore();
  const send = internals._NodePrototype.send;
  for (const def of flow) {
    const node = helper.getNode(String(def.id)) as TestNode | undefined;
    if (node && (node._wireCount as number) > 0 && node.send !== send) node.send = send;
  }
}

export interface LoadOptions {
  spies?: boolean;
  syncDelivery?: boolean;
}

/** The flow with a position for each node on a tab: Node-RED takes a node without one for a config node. */
export function positioned(flow: FlowNode[]): FlowNode[] {
  return flow.map((n) => (n.z !== undefined && n.x === undefined ? { x: 100, y: 100, ...n } : n));
}

/** Loads a flow (positioned). */
export async function loadFlow(flow: FlowNode[], { spies = false, syncDelivery = false }: LoadOptions = {}): Promise<void> {
  const nodes = positioned(flow);
  // Node-RED's settings.js `runtimeSyncDelivery` (default false: every msg is delivered in its own
  // setImmediate). The flow engine reads it when flows are (re)loaded, so it applies to this flow only.
  const settings = internals._settings;
  if (syncDelivery) internals.settings({ runtimeSyncDelivery: true });
  try {
    await helper.load([...packageNodes(), benchNodes], nodes);
  } finally {
    internals._settings = settings;
  }
  if (!spies) despy(nodes);
}

export async function unloadFlow(): Promise<void> {
  await helper.unload();
}

export function getNode(id: string): TestNode {
  return helper.getNode(id);
}
