/**
 * The one lookup of a config node: the deployed node with that id when it is of that type, else
 * undefined (an empty id, a node deleted or of another type). Each config node's shape (its `T`) is
 * declared beside its runtime.
 */
import type { ConfigNodeType } from './node-types';
import type { Node, NodeAPI } from './node-red';

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is the caller's config node shape, named at each call (findConfig<BrokerNode>(…))
export function findConfig<T extends Node>(RED: NodeAPI, type: ConfigNodeType, id: unknown): T | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  const node = RED.nodes.getNode(id);
  return node && node.type === type ? (node as T) : undefined;
}
