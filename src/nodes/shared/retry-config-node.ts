/** The retry-config node's shape as other nodes see it. */
import { EXCHANGE_TYPES, validateTopologyConfig, type ExchangeType, type RetryTopologyConfig } from '../../lib/topology';
import { parseDelays, parseQueueArguments } from '../../lib/topology-parse';
import type { RetryBrokerNode } from './broker-node';
import { readNumberFields } from './number-fields';
import { stringProp, type Node, type NodeAPI, type NodeDef } from './node-red';

export interface RetryConfigNode extends Node {
  /** undefined when the configuration is invalid; `problems` then says why. */
  topology: RetryTopologyConfig | undefined;
  problems: string[];
  broker: RetryBrokerNode | undefined;
}

export function findRetryConfig(RED: NodeAPI, id: unknown): RetryConfigNode | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  const node = RED.nodes.getNode(id);
  return node && node.type === 'retry-config' ? (node as RetryConfigNode) : undefined;
}

function exchangeType(value: unknown, fallback: ExchangeType): ExchangeType {
  return EXCHANGE_TYPES.find((t) => t === value) ?? fallback;
}

/** The topology a node definition describes; throws with every problem found. */
export function topologyFromDefinition(def: NodeDef): RetryTopologyConfig {
  const mainQueue = stringProp(def.mainQueue);
  // Ranges are checked with the rest of the topology (validateTopologyConfig); here only what is not a number.
  const numbers = readNumberFields(def, {
    maxAttempts: { label: 'max attempts', fallback: 3 },
    maxAge: { label: 'max age', fallback: 0 },
  });
  const topology: RetryTopologyConfig = {
    mode: def.mode === 'check' ? 'check' : 'declare',
    mainExchange: stringProp(def.mainExchange),
    mainExchangeType: exchangeType(def.mainExchangeType, 'direct'),
    mainQueue,
    routingKeys: stringProp(def.routingKeys)
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== ''),
    retryExchange: stringProp(def.retryExchange),
    retryExchangeType: exchangeType(def.retryExchangeType, 'fanout'),
    // Predictable names when left empty, documented in the help.
    retryQueue: stringProp(def.retryQueue) || (mainQueue && `${mainQueue}.retry`),
    retryDelaysMs: parseDelays(typeof def.retryDelay === 'number' ? def.retryDelay : stringProp(def.retryDelay) || '5000'),
    parkingQueue: stringProp(def.parkingQueue) || (mainQueue && `${mainQueue}.parking`),
    maxAttempts: numbers.values.maxAttempts,
    maxAgeMs: Math.round(numbers.values.maxAge * 1000),
    mainQueueArguments: parseQueueArguments(stringProp(def.mainQueueArgs), 'main queue arguments'),
    retryQueueArguments: parseQueueArguments(stringProp(def.retryQueueArgs), 'retry queue arguments'),
    parkingQueueArguments: parseQueueArguments(stringProp(def.parkingQueueArgs), 'parking queue arguments'),
    alternateExchange: stringProp(def.alternateExchange),
    unroutedQueue: stringProp(def.unroutedQueue),
  };
  const problems = numbers.problems.length > 0 ? numbers.problems : validateTopologyConfig(topology);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return topology;
}
