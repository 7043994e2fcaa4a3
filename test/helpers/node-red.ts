/** Runs the package's compiled nodes (what ships) inside node-red-node-test-helper's runtime. */
import helper from 'node-red-node-test-helper';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from './broker';

helper.init(require.resolve('node-red'));

const core = path.dirname(require.resolve('@node-red/nodes/package.json'));

/** The package's node modules from a build (dist/ by default; the benchmark can A/B another build). */
export function packageNodesFrom(distRoot: string): unknown[] {
  const dist = path.join(distRoot, 'nodes');
  // Every node type the package declares (package.json "node-red".nodes), as Node-RED would load them.
  const names = Object.keys((JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } })['node-red'].nodes);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED node modules are CommonJS functions
  return names.map((n): unknown => require(path.join(dist, n, `${n}.js`)));
}

export const packageNodes: unknown[] = packageNodesFrom(path.resolve(__dirname, '../../dist'));

/* eslint-disable @typescript-eslint/no-require-imports -- Node-RED node modules are CommonJS functions */
/** Core nodes the example flow uses. */
export const coreNodes: unknown[] = [
  require(path.join(core, 'core/common/20-inject.js')),
  require(path.join(core, 'core/common/21-debug.js')),
  require(path.join(core, 'core/common/90-comment.js')),
  require(path.join(core, 'core/function/10-function.js')),
  require(path.join(core, 'core/function/15-change.js')),
  require(path.join(core, 'core/common/25-catch.js')),
  require(path.join(core, 'core/common/60-link.js')),
  require(path.join(core, 'core/network/05-tls.js')),
];
/* eslint-enable @typescript-eslint/no-require-imports */

export { helper };

/**
 * Loads a test flow. Nodes on a tab get x/y: Node-RED takes a node without a position for a config
 * node.
 */
export async function loadFlow(
  flow: Array<Record<string, unknown>>,
  nodes: unknown[] = [...packageNodes, ...coreNodes],
  credentials: Record<string, Record<string, string>> = {},
): Promise<void> {
  await helper.load(nodes, positioned(flow), credentials);
}

/** Nodes on a tab get x/y: Node-RED takes a node without a position for a config node. */
function positioned(flow: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return flow.map((n) => (n.z !== undefined && n.x === undefined ? { x: 100, y: 100, ...n } : n));
}

/** Deploys a changed flow into the loaded runtime as the editor does: 'full', 'flows' or 'nodes' (modified nodes only). */
export async function redeploy(flow: Array<Record<string, unknown>>, type: 'full' | 'flows' | 'nodes'): Promise<void> {
  await helper.setFlows(positioned(flow), type);
}

interface SpyCall {
  thisValue: { id?: string };
  args: Array<{ fill?: string; shape?: string; text?: string } | undefined>;
}

/** Every status a node set since the last load (the test helper spies on Node.prototype.status). */
export function statusCalls(): Array<{ id: string; status: { fill?: string; shape?: string; text?: string } }> {
  const proto = (helper as unknown as { _NodePrototype: { status: { getCalls(): SpyCall[] } } })._NodePrototype;
  return proto.status.getCalls().map((c) => ({ id: String(c.thisValue.id), status: c.args[0] ?? {} }));
}

/** The status texts one node showed, in order. */
export function statusTexts(id: string): string[] {
  return statusCalls()
    .filter((c) => c.id === id)
    .map((c) => c.status.text ?? '');
}

/**
 * The status one node set last. Not `helper.getNode(id).status.lastCall`: the spy is on the prototype,
 * so its last call may be another node's.
 */
export function lastStatus(id: string): { fill?: string; shape?: string; text?: string } | undefined {
  return statusCalls()
    .filter((c) => c.id === id)
    .at(-1)?.status;
}

/** Every log line (log, warn, error of any node) since the last load. */
export function logLines(): string[] {
  return helper.log().args.map(([entry]) => (typeof entry.msg === 'string' ? entry.msg : (JSON.stringify(entry.msg) ?? '')));
}

/** The error log lines (what the debug sidebar shows) of one node since the last load. */
export function errorsOf(id: string): string[] {
  return helper.log()
    .args.filter(([entry]) => entry.level === 20 && entry.id === id)
    .map(([entry]) => String(entry.msg));
}

/**
 * Sends `msg` to the node `id` (e.g. a park-replay node, its output wired to a helper node collecting
 * into `io.out`, its `call:error`s into `io.errors`) and returns its output, or throws its error.
 */
export async function actOn(id: string, msg: Record<string, unknown>, io: { out: Array<Record<string, any>>; errors: string[] }): Promise<Record<string, any>> {
  const before = { out: io.out.length, errors: io.errors.length };
  helper.getNode(id).receive(msg);
  await waitFor(() => io.out.length > before.out || io.errors.length > before.errors, `the ${id} result`);
  if (io.errors.length > before.errors) throw new Error(io.errors[io.errors.length - 1]);
  return io.out[io.out.length - 1]!;
}
