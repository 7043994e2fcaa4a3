/**
 * retry-publish's partitioned target: the key of a msg (`msg.key` by default, another msg property, or
 * a JSONata expression) routed to its partition of a partitioned retry configuration.
 */
import { isPartitioned, partitionKeyText, partitionTarget, type PartitionRouting, type RetryTopologyConfig } from '../../lib/topology';
import { findRetryConfig } from '../shared/retry-config-node';
import type { Node, NodeAPI, NodeMessage } from '../shared/node-red';
import type { PartitionKeyProperties } from './properties';

export type KeyOf = (msg: NodeMessage) => Promise<string>;

/** How the node reads a msg's key, from its `key` / `keyType` properties; throws when an expression does not parse. */
export function partitionKeyReader(RED: NodeAPI, node: Node, { keyType: type, key: text }: PartitionKeyProperties): KeyOf {
  const keyText = (value: unknown, where: string): string => {
    const key = partitionKeyText(value);
    if (key === undefined) throw new Error(`partition key: ${where} is ${value === undefined || value === '' ? 'missing' : 'not a string or number'}; every message of a partitioned configuration needs its key`);
    return key;
  };
  if (type === 'jsonata') {
    let expression: unknown;
    try {
      expression = RED.util.prepareJSONataExpression(text, node);
    } catch (err) {
      throw new Error(`partition key expression ${JSON.stringify(text)} does not parse: ${(err as Error).message}`, { cause: err });
    }
    return (msg) =>
      new Promise((resolve, reject) => {
        RED.util.evaluateJSONataExpression(expression, msg, (err, value) => {
          if (err) reject(new Error(`partition key expression ${JSON.stringify(text)} failed: ${err.message}`));
          else {
            try {
              resolve(keyText(value, `expression ${JSON.stringify(text)}`));
            } catch (e) {
              reject(e instanceof Error ? e : new Error(String(e)));
            }
          }
        });
      });
  }
  return (msg) => Promise.resolve().then(() => keyText(RED.util.getMessageProperty(msg, text), `msg.${text}`));
}

/** Where a msg goes: its partition's route on the partition exchange. */
export async function partitionedTarget(topology: RetryTopologyConfig, routing: () => Promise<PartitionRouting>, keyOf: KeyOf, msg: NodeMessage): Promise<{ exchange: string; routingKey: string; partition?: number }> {
  const key = await keyOf(msg);
  return partitionTarget(topology, await routing(), key);
}

export type PartitionRoute = (msg: NodeMessage) => Promise<{ exchange: string; routingKey: string; partition?: number }>;

/**
 * The node's partitioned route (`partitions`: a partitioned retry configuration's id), or none; a
 * problem when the configuration named is missing, invalid or not partitioned, or the key expression does not parse.
 */
export function partitionSettings(RED: NodeAPI, node: Node, id: string, key: PartitionKeyProperties): { route?: PartitionRoute; problem?: string } {
  if (id === '') return {};
  const config = findRetryConfig(RED, id);
  if (!config) return { problem: 'the selected partitioned retry configuration does not exist (deleted or not deployed)' };
  const { topology } = config;
  if (!topology) return { problem: `retry configuration: ${config.problems.join('; ')}` };
  if (!isPartitioned(topology)) return { problem: `retry configuration '${topology.mainQueue}' is not partitioned (set its partitions to 2 or more)` };
  try {
    const keyOf = partitionKeyReader(RED, node, key);
    return { route: (msg) => partitionedTarget(topology, () => config.partitionRouting(), keyOf, msg) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}
