/**
 * The deduplication store config node (`retry-dedupe`) as a consumer sees it, and how a consumer
 * reads a delivery's key: its messageId, a msg property, or a JSONata expression on the msg the
 * flow would get.
 */
import { keyFromValue, messageIdKey, type DedupeKeyResult, type DedupeStore } from '../../lib/dedupe';
import type { DeliveredMessage } from '../../lib/message';
import { findConfig } from './config-lookup';
import { stringProp, type Node, type NodeAPI, type NodeDef, type NodeMessage } from './node-red';
import { NODE_TYPE } from './node-types';
import type { ConfigUser } from './users';

export interface DedupeStoreNode extends Node {
  /** undefined when the configuration cannot work; `problems` says why. */
  store: DedupeStore | undefined;
  problems: string[];
  /** How long a claim lives, and how long a processed key is remembered (ms). */
  leaseMs: number;
  retentionMs: number;
  /** The store's server keeps nothing on disk: every processed key is forgotten on a restart (a Redis store says so at its first start). */
  forgetsOnRestart: boolean;
  register(user: ConfigUser): void;
  deregister(user: ConfigUser): Promise<void>;
}

export function findDedupeStore(RED: NodeAPI, id: unknown): DedupeStoreNode | undefined {
  return findConfig<DedupeStoreNode>(RED, NODE_TYPE.retryDedupe, id);
}

export const DEDUPE_KEY_TYPES = ['messageId', 'msg', 'jsonata'] as const;

/**
 * How the consumer finds a delivery's key, from its `dedupeKey` / `dedupeKeyType` properties; throws
 * (naming the problem) when an expression does not parse.
 */
export function keyReader(RED: NodeAPI, node: Node, def: NodeDef, toMsg: (delivered: DeliveredMessage) => NodeMessage): (delivered: DeliveredMessage) => DedupeKeyResult | Promise<DedupeKeyResult> {
  const type = stringProp(def.dedupeKeyType, 'messageId');
  const text = stringProp(def.dedupeKey);
  if (type === 'msg' && text !== '') {
    return (delivered) => {
      try {
        return keyFromValue(RED.util.getMessageProperty(toMsg(delivered), text), `msg.${text}`);
      } catch (err) {
        return { problem: `msg.${text} cannot be read: ${(err as Error).message}` };
      }
    };
  }
  if (type === 'jsonata' && text !== '') {
    let expression: unknown;
    try {
      expression = RED.util.prepareJSONataExpression(text, node);
    } catch (err) {
      throw new Error(`deduplication key expression ${JSON.stringify(text)} does not parse: ${(err as Error).message}`, { cause: err });
    }
    return (delivered) =>
      new Promise((resolve) => {
        RED.util.evaluateJSONataExpression(expression, toMsg(delivered), (err, value) => {
          resolve(err ? { problem: `expression ${JSON.stringify(text)} failed: ${err.message}` } : keyFromValue(value, `expression ${JSON.stringify(text)}`));
        });
      });
  }
  return messageIdKey;
}
