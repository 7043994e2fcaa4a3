/**
 * Every node type of the package, named once: the runtime registers them with these names, the
 * editor's dialogs and the config-node lookups refer to them through this list, and a test checks it
 * against package.json's `node-red.nodes`. Pure: the editor bundles it too.
 */
/** Each node type by a name code can check: `NODE_TYPE.retryConfig` rather than `'retry-config'`. */
export const NODE_TYPE = {
  retryBroker: 'retry-broker',
  retryConfig: 'retry-config',
  retryConsumer: 'retry-consumer',
  retrySettle: 'retry-settle',
  parkPublisher: 'park-publisher',
  retryPublish: 'retry-publish',
  parkReplay: 'park-replay',
  retryDedupe: 'retry-dedupe',
  retryPostgres: 'retry-postgres',
  outboxWrite: 'outbox-write',
  outboxRelay: 'outbox-relay',
  retryHealth: 'retry-health',
  retryConsole: 'retry-console',
} as const;

/** The node types in package.json's order (`node-red.nodes`). */
export const NODE_TYPES = Object.values(NODE_TYPE);

export type NodeType = (typeof NODE_TYPE)[keyof typeof NODE_TYPE];

/** The config node types: nodes find them with `findConfig` (shared/config-lookup.ts), never by hand. */
export const CONFIG_NODE_TYPES = [NODE_TYPE.retryBroker, NODE_TYPE.retryConfig, NODE_TYPE.retryDedupe, NODE_TYPE.retryPostgres] as const;
export type ConfigNodeType = (typeof CONFIG_NODE_TYPES)[number];

export function isNodeType(value: unknown): value is NodeType {
  return typeof value === 'string' && (NODE_TYPES as readonly string[]).includes(value);
}
