/** Runs the package's compiled nodes (what ships) inside node-red-node-test-helper's runtime. */
import helper from 'node-red-node-test-helper';
import path from 'node:path';

helper.init(require.resolve('node-red'));

const dist = path.resolve(__dirname, '../../dist/nodes');
const core = path.dirname(require.resolve('@node-red/nodes/package.json'));

/* eslint-disable @typescript-eslint/no-require-imports -- Node-RED node modules are CommonJS functions */
export const packageNodes: unknown[] = [
  require(path.join(dist, 'retry-broker/retry-broker.js')),
  require(path.join(dist, 'retry-config/retry-config.js')),
  require(path.join(dist, 'retry-consumer/retry-consumer.js')),
  require(path.join(dist, 'retry-settle/retry-settle.js')),
  require(path.join(dist, 'park-publisher/park-publisher.js')),
  require(path.join(dist, 'retry-publish/retry-publish.js')),
  require(path.join(dist, 'park-replay/park-replay.js')),
];

/** Core nodes the example flow uses. */
export const coreNodes: unknown[] = [
  require(path.join(core, 'core/common/20-inject.js')),
  require(path.join(core, 'core/common/21-debug.js')),
  require(path.join(core, 'core/common/90-comment.js')),
  require(path.join(core, 'core/function/10-function.js')),
  require(path.join(core, 'core/function/15-change.js')),
  require(path.join(core, 'core/common/25-catch.js')),
  require(path.join(core, 'core/common/60-link.js')),
];
/* eslint-enable @typescript-eslint/no-require-imports */

export { helper };

/**
 * Loads a test flow. Nodes on a tab get x/y: Node-RED takes a node without a position for a config
 * node.
 */
export async function loadFlow(flow: Array<Record<string, unknown>>, nodes: unknown[] = [...packageNodes, ...coreNodes]): Promise<void> {
  const positioned = flow.map((n) => (n.z !== undefined && n.x === undefined ? { x: 100, y: 100, ...n } : n));
  await helper.load(nodes, positioned);
}
