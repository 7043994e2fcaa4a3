/**
 * The retry topology a retry-config definition (saved node or open dialog) describes, and what is
 * wrong with it: one implementation for the runtime and the editor. Pure and browser-safe: it imports
 * single pure files of src/lib (the editor bundle takes no Node.js module).
 */
import { parseRoutingKeys } from '../../lib/rules/property-rules';
import { readNumberFields } from '../../lib/rules/number-fields';
import { EXCHANGE_TYPES, type ExchangeType, type RetryTopologyConfig, validateTopologyConfig } from '../../lib/topology/plan';
import { PARTITION_ROUTINGS } from '../../lib/topology/partitions';
import { parseDelays, parseQueueArguments, queueNamesOf } from '../../lib/topology/parse';
import { applyQueueType } from '../../lib/topology/queue-type';
import { stringProp } from './node-red';
import { CONFIG_NUMBERS } from './config-properties';

function exchangeType(value: unknown, fallback: ExchangeType): ExchangeType {
  return EXCHANGE_TYPES.find((t) => t === value) ?? fallback;
}

/** The topology a node definition describes; throws with every problem found. */
export function topologyFromDefinition(def: Record<string, unknown>): RetryTopologyConfig {
  const names = queueNamesOf(stringProp(def.mainQueue), stringProp(def.retryQueue), stringProp(def.parkingQueue));
  const numbers = readNumberFields(def, CONFIG_NUMBERS);
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
    partitions: numbers.values.partitions,
    partitionRouting: PARTITION_ROUTINGS.find((r) => r === def.partitionRouting) ?? 'auto',
  };
  // Check mode on a queue another package made (docs/migration.md): checked, only the retry and parking queues declared.
  if (topology.mode === 'check' && (def.existingQueue === true || def.existingQueue === 'true')) topology.existingMainQueue = true;
  // Set only when chosen: a configuration saved before these options means the same as before.
  if (def.delayedRetry === 'broker') topology.delayedRetry = 'broker';
  if (numbers.values.retryJitter > 0) topology.retryJitterPercent = numbers.values.retryJitter;
  // The queue type field (issue 53) into the main and parking queues' arguments; absent: the extra arguments decide, as before.
  const queueTypeProblems = applyQueueType(topology, def.queueType);
  const problems = numbers.problems.length > 0 ? numbers.problems : [...queueTypeProblems, ...validateTopologyConfig(topology)];
  if (problems.length > 0) throw new Error(problems.join('; '));
  return topology;
}

/**
 * Every problem of a definition, as sentences (empty when valid): what the runtime would refuse at
 * deploy. The editor's dialog asks it too, so both refuse the same things.
 */
export function topologyProblemsOf(def: Record<string, unknown>): string[] {
  try {
    topologyFromDefinition(def);
    return [];
  } catch (err) {
    return (err as Error).message.split('; ');
  }
}
