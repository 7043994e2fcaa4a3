/** The retry-config node's shape as other nodes see it. */
import type { ConsumerSessions } from './settle-node';
import { parseRoutingKeys, readNumberFields } from '../../lib/rules';
import { NUMBER_FIELDS } from './properties';
import { EXCHANGE_TYPES, type ExchangeType, parseDelays, parseQueueArguments, queueNamesOf, type RetryTopologyConfig, validateTopologyConfig } from '../../lib/topology';
import type { RetryBrokerNode } from './broker-node';
import { stringProp, type Node, type NodeAPI, type NodeDef } from './node-red';

export interface RetryConfigNode extends Node {
  /** undefined when the configuration is invalid; `problems` then says why. */
  topology: RetryTopologyConfig | undefined;
  problems: string[];
  broker: RetryBrokerNode | undefined;
  /** The consumer sessions of this configuration: end nodes settle through them, replays are told to them. */
  consumers: ConsumerSessions;
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
  const names = queueNamesOf(stringProp(def.mainQueue), stringProp(def.retryQueue), stringProp(def.parkingQueue));
  const numbers = readNumberFields(def, NUMBER_FIELDS['retry-config']);
  const topology: RetryTopologyConfig = {
    mode: def.mode === 'check' ? 'check' : 'declare',
    mainExchange: stringProp(def.mainExchange),
    mainExchangeType: exchangeType(def.mainExchangeType, 'direct'),
    mainQueue: names.main,
    routingKeys: parseRoutingKeys(stringProp(def.routingKeys)),
    retryExchange: stringProp(def.retryExchange),
    retryExchangeType: exchangeType(def.retryExchangeType, 'fanout'),
    // Predictable names when left empty, documented in the help.
    retryQueue: names.retry,
    retryDelaysMs: parseDelays(typeof def.retryDelay === 'number' ? def.retryDelay : stringProp(def.retryDelay) || '5000'),
    parkingQueue: names.parking,
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
