/**
 * Every node type of the package, named once: the runtime registers them with these names, the
 * editor's dialogs and the config-node lookups refer to them through this list, and a test checks it
 * against package.json's `node-red.nodes`. Pure: the editor bundles it too.
 */
export const NODE_TYPES = [
  'retry-broker',
  'retry-config',
  'retry-consumer',
  'retry-settle',
  'park-publisher',
  'retry-publish',
  'park-replay',
  'retry-dedupe',
  'retry-postgres',
  'outbox-write',
  'outbox-relay',
  'retry-health',
  'retry-console',
] as const;

export type NodeType = (typeof NODE_TYPES)[number];

/** The config node types: nodes find them with `findConfig` (shared/config-lookup.ts), never by hand. */
export const CONFIG_NODE_TYPES = ['retry-broker', 'retry-config', 'retry-dedupe', 'retry-postgres'] as const satisfies readonly NodeType[];
export type ConfigNodeType = (typeof CONFIG_NODE_TYPES)[number];

export function isNodeType(value: unknown): value is NodeType {
  return typeof value === 'string' && (NODE_TYPES as readonly string[]).includes(value);
}
