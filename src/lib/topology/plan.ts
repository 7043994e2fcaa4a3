/**
 * The retry topology as plain data: what exchanges, queues, arguments and bindings a retry
 * configuration means, and whether a configuration is valid.
 * Pure (the editor runs it too): the arguments it sets are named in arguments.ts, parsing the editor's fields lives in
 * parse.ts, comparing with the broker in diff.ts, applying a plan to a broker in apply.ts.
 */
import { nameProblem, routingKeysProblem } from '../rules';
import { isPartitioned, partitionProblems, partitionTopology, staticRouting } from './partitions';
import { ALTERNATE_EXCHANGE, DEAD_LETTER_EXCHANGE, DEAD_LETTER_ROUTING_KEY, isQuorum, MESSAGE_TTL, sameArgumentValue, SINGLE_ACTIVE_CONSUMER, type QueueArguments } from './arguments';
import { brokerRetryArguments, QUEUE_TYPE } from './broker-retry';
import { retryQueueDelays, retryQueueNames, retryQueueOf } from './retry-queues';
import { EXCHANGE_TYPES, type PlannedBinding, type PlannedExchange, type PlannedQueue, type RetryTopologyConfig, type TopologyPlan } from './config';

/** The configuration and plan types live in config.ts; named here too, where they were first. */
export { EXCHANGE_TYPES, type ExchangeType, type PlannedBinding, type PlannedExchange, type PlannedQueue, type RetryTopologyConfig, type TopologyMode, type TopologyPlan } from './config';

/** The retry queues' names and delays live in retry-queues.ts; named here too, where they were first. */
export { formatDelay, retryDelayFor, retryQueueFor, retryQueueNames } from './retry-queues';

/** The alternate exchange and its queue, or undefined when the configuration sets none. */
export function unroutedRoute(config: Pick<RetryTopologyConfig, 'mainExchange' | 'alternateExchange' | 'unroutedQueue'>): { exchange: string; queue: string } | undefined {
  const exchange = config.alternateExchange ?? '';
  if (exchange === '') return undefined;
  return { exchange, queue: config.unroutedQueue || `${config.mainExchange}.unrouted` };
}

/**
 * How a retry reaches its delay queue.
 * - `dead-letter`: the consumer rejects the message and the broker dead-letters it (one delay; the
 *   classic layout, works with a shared retry exchange).
 * - `republish`: the package publishes a copy to the delay queue of the attempt's tier (confirmed,
 *   with its own attempt header), then acks the original. Used for backoff tiers, and for quorum main
 *   queues: there the main queue dead-letters to the parking queue, so a message the broker
 *   dead-letters at the delivery limit is parked, never dropped as a dead-letter cycle.
 */
export type RetryRoute = 'dead-letter' | 'republish' | 'broker';

/** `broker`: the consumer rejects with requeue, and the quorum main queue delays the message itself (RabbitMQ 4.3+). */
export function retryRoute(config: Pick<RetryTopologyConfig, 'retryDelaysMs' | 'mainQueueArguments' | 'existingMainQueue' | 'delayedRetry' | 'retryJitterPercent'>): RetryRoute {
  if (config.delayedRetry === 'broker') return 'broker';
  return config.existingMainQueue === true || config.retryDelaysMs.length > 1 || (config.retryJitterPercent ?? 0) > 0 || isQuorum(config.mainQueueArguments) ? 'republish' : 'dead-letter';
}

/**
 * Quorum retry (tier) queues dead-letter at most once: an expiry during a leader change is dropped. So
 * on the republish route the package's retry mover (retry-mover.ts) brings back tiers up to this delay
 * itself, holding each delivery until due, well within RabbitMQ's `consumer_timeout` (30 min default).
 */
export const MOVER_HORIZON_MS = 600_000;
/**
 * Added to the `x-message-ttl` of a tier the mover serves: a message handed back when the mover's
 * channel dies waits for the reconnected mover instead of expiring during the leader election. A minute
 * covers a failover and the reconnect backoff (5 s by default) many times; the broker's fallback (no
 * Node-RED at all) stays close to the delay.
 */
export const MOVER_TTL_SLACK_MS = 60_000;

/** Whether the retry mover brings a tier of this delay back (else the broker's TTL dead-lettering does). */
export function movedByPackage(config: Pick<RetryTopologyConfig, 'retryDelaysMs' | 'mainQueueArguments' | 'retryQueueArguments' | 'existingMainQueue' | 'delayedRetry' | 'retryJitterPercent'>, delayMs: number): boolean {
  return retryRoute(config) === 'republish' && isQuorum(config.retryQueueArguments) && delayMs <= MOVER_HORIZON_MS;
}

/** Arguments the topology owns: a user's extra arguments may not set them differently. */
function topologyArguments(config: RetryTopologyConfig): { main: QueueArguments; retry: (delayMs: number) => QueueArguments; parking: QueueArguments } {
  const owned = routeArguments(config);
  if (config.singleActiveConsumer) owned.main[SINGLE_ACTIVE_CONSUMER] = true;
  return owned;
}

function routeArguments(config: RetryTopologyConfig): { main: QueueArguments; retry: (delayMs: number) => QueueArguments; parking: QueueArguments } {
  if (retryRoute(config) === 'broker') return { main: brokerRetryArguments(config), retry: () => ({}), parking: {} };
  if (retryRoute(config) === 'republish') {
    return {
      // Only the broker dead-letters from here (delivery limit, a reject outside the package): park it.
      // An existing main queue keeps the arguments it has: the package sets none on it.
      main: config.existingMainQueue === true ? {} : { [DEAD_LETTER_EXCHANGE]: '', [DEAD_LETTER_ROUTING_KEY]: config.parkingQueue },
      // The TTL is the fallback where the retry mover serves the tier (see MOVER_TTL_SLACK_MS).
      retry: (delayMs) => ({ [MESSAGE_TTL]: movedByPackage(config, delayMs) ? delayMs + MOVER_TTL_SLACK_MS : delayMs, [DEAD_LETTER_EXCHANGE]: '', [DEAD_LETTER_ROUTING_KEY]: config.mainQueue }),
      parking: {},
    };
  }
  const perQueueRouting = config.retryExchange === '';
  const main: QueueArguments = { [DEAD_LETTER_EXCHANGE]: config.retryExchange };
  if (perQueueRouting) main[DEAD_LETTER_ROUTING_KEY] = config.retryQueue;
  const retry = (delayMs: number): QueueArguments =>
    perQueueRouting
      ? { [MESSAGE_TTL]: delayMs, [DEAD_LETTER_EXCHANGE]: '', [DEAD_LETTER_ROUTING_KEY]: config.mainQueue }
      : { [MESSAGE_TTL]: delayMs, [DEAD_LETTER_EXCHANGE]: config.mainExchange };
  return { main, retry, parking: {} };
}

/** Everything wrong with a configuration, as sentences for the user; empty when it is valid. */
export function validateTopologyConfig(config: RetryTopologyConfig): string[] {
  const problems: string[] = partitionProblems(config);
  const names: Array<[string, string]> = [
    ['main queue', config.mainQueue],
    ...(config.delayedRetry === 'broker' ? [] : retryQueueNames(config)).map((name): [string, string] => ['retry queue', name]),
    ['parking queue', config.parkingQueue],
  ];
  // Without a main queue name the retry and parking names (derived from it) are empty too: that one sentence says it all.
  const noMain = config.mainQueue === '';
  for (const [label, name] of names) {
    const problem = name ? nameProblem(name) : null;
    if (!name) {
      if (!noMain || label === 'main queue') problems.push(`${label} name is empty`);
    }
    else if (problem) problems.push(`${label} '${name.slice(0, 60)}': ${problem.text}`);
  }
  for (const [label, name] of [['main exchange', config.mainExchange], ['retry exchange', config.retryExchange]] as const) {
    const problem = name ? nameProblem(name) : null;
    // An existing main queue may be bound to a broker's own exchange (amq.topic, …): it is only checked, never declared.
    const existing = label === 'main exchange' && config.existingMainQueue === true && problem?.code === 'reserved';
    if (problem && !existing) problems.push(`${label} '${name.slice(0, 60)}': ${problem.text}`);
  }
  const keysProblem = routingKeysProblem(config.routingKeys.join(','));
  if (keysProblem) problems.push(keysProblem.text);
  const unrouted = unroutedRoute(config);
  if (unrouted) {
    names.push(['unrouted-messages queue', unrouted.queue]);
    if (config.mainExchange === '') problems.push('an alternate exchange needs a main exchange: the default exchange cannot have one');
    if (unrouted.exchange.startsWith('amq.')) problems.push(`alternate exchange '${unrouted.exchange}': names starting with 'amq.' are reserved by RabbitMQ`);
    if (unrouted.exchange === config.mainExchange || unrouted.exchange === config.retryExchange) {
      problems.push('the alternate exchange must differ from the main and retry exchanges');
    }
  }
  const distinct = new Set(names.map(([, n]) => n));
  if (!noMain && distinct.size !== names.length) problems.push('main, retry, parking (and unrouted-messages) queues and retry delays must all be different');
  if (config.retryExchange !== '' && config.retryExchange === config.mainExchange && retryRoute(config) !== 'broker') {
    problems.push('retry exchange must differ from the main exchange (a retried message would loop straight back)');
  }
  if (!Number.isInteger(config.maxAttempts) || config.maxAttempts < 1) problems.push('max attempts must be a whole number of at least 1');
  if (config.retryDelaysMs.length === 0) problems.push('at least one retry delay is needed');
  if (config.retryDelaysMs.some((ms) => !Number.isInteger(ms) || ms < 0)) problems.push('retry delays must be whole numbers of milliseconds, 0 or more');
  if (!Number.isFinite(config.maxAgeMs) || config.maxAgeMs < 0) problems.push('max age must be 0 (no limit) or more');
  problems.push(...brokerRetryProblems(config));
  if (retryRoute(config) === 'republish' && config.retryExchange !== '') {
    problems.push(
      isQuorum(config.mainQueueArguments)
        ? 'a quorum main queue retries by republishing to its retry queue: leave the retry exchange empty'
        : 'several retry delays are retried by republishing to one queue per delay: leave the retry exchange empty',
    );
  }
  if (!EXCHANGE_TYPES.includes(config.mainExchangeType)) problems.push(`main exchange type '${config.mainExchangeType}' is not one of ${EXCHANGE_TYPES.join(', ')}`);
  if (!EXCHANGE_TYPES.includes(config.retryExchangeType)) problems.push(`retry exchange type '${config.retryExchangeType}' is not one of ${EXCHANGE_TYPES.join(', ')}`);
  if (config.mainExchange === '' && config.routingKeys.length > 0) {
    problems.push('routing keys need a main exchange: the default exchange cannot be bound');
  }
  const owned = topologyArguments(config);
  const extras: Array<[PlannedQueue['role'], QueueArguments, QueueArguments]> = [
    ['main', config.mainQueueArguments, owned.main],
    ['retry', config.retryQueueArguments, owned.retry(config.retryDelaysMs[0] ?? 0)],
    ['parking', config.parkingQueueArguments, owned.parking],
  ];
  for (const [role, extra, ownedArgs] of extras) {
    for (const key of Object.keys(extra)) {
      if (key in ownedArgs && !sameArgumentValue(ownedArgs[key], extra[key])) {
        problems.push(`${role} queue argument ${key} is set by the retry topology; remove it from the extra arguments`);
      }
    }
  }
  return problems;
}

/**
 * The exchanges, queues (with full arguments) and bindings a configuration stands for. A partitioned
 * one: every partition's (routing `auto` taken as computed: the consumers resolve it on the broker).
 */
export function planTopology(config: RetryTopologyConfig): TopologyPlan {
  if (isPartitioned(config)) return planPartitions(config);
  return planOne(config);
}

function planPartitions(config: RetryTopologyConfig): TopologyPlan {
  const plan: TopologyPlan = { exchanges: [], queues: [], bindings: [] };
  for (let i = 0; i < (config.partitions ?? 0); i++) {
    const part = planOne(partitionTopology(config, i, staticRouting(config)));
    for (const exchange of part.exchanges) if (!plan.exchanges.some((e) => e.name === exchange.name)) plan.exchanges.push(exchange);
    for (const queue of part.queues) if (!plan.queues.some((q) => q.name === queue.name)) plan.queues.push(queue);
    plan.bindings.push(...part.bindings);
  }
  return plan;
}

function planOne(config: RetryTopologyConfig): TopologyPlan {
  const owned = topologyArguments(config);
  const exchanges: PlannedExchange[] = [];
  const unrouted = unroutedRoute(config);
  // The alternate exchange first: it should exist before the exchange that names it.
  if (unrouted) exchanges.push({ name: unrouted.exchange, type: 'fanout' });
  if (config.mainExchange !== '') {
    exchanges.push(unrouted ? { name: config.mainExchange, type: config.mainExchangeType, arguments: { [ALTERNATE_EXCHANGE]: unrouted.exchange } } : { name: config.mainExchange, type: config.mainExchangeType });
  }
  // Broker-native retry has no retry route: a retry exchange left in the configuration is not declared.
  if (config.retryExchange !== '' && retryRoute(config) !== 'broker') exchanges.push({ name: config.retryExchange, type: config.retryExchangeType });

  const queues: PlannedQueue[] = [
    { role: 'main', name: config.mainQueue, arguments: { ...config.mainQueueArguments, ...owned.main } },
    ...(retryRoute(config) === 'broker' ? [] : retryQueueDelays(config)).map((delayMs): PlannedQueue => ({
      role: 'retry',
      name: retryQueueOf(config, delayMs),
      arguments: { ...config.retryQueueArguments, ...owned.retry(delayMs) },
    })),
    { role: 'parking', name: config.parkingQueue, arguments: { ...config.parkingQueueArguments } },
  ];
  if (unrouted) queues.push({ role: 'unrouted', name: unrouted.queue, arguments: {} });

  const bindings: PlannedBinding[] = [];
  if (config.mainExchange !== '') {
    // A fanout or headers exchange ignores the key; bind once with '' when none is given.
    const keys = config.routingKeys.length > 0 ? config.routingKeys : [''];
    for (const routingKey of keys) bindings.push({ queue: config.mainQueue, exchange: config.mainExchange, routingKey });
  }
  if (config.retryExchange !== '' && retryRoute(config) === 'dead-letter') {
    // Dead-lettered messages keep their routing key, so the retry queue is bound with the main keys
    // (a fanout retry exchange, as in the classic layout, ignores them).
    const keys = config.retryExchangeType === 'fanout' || config.routingKeys.length === 0 ? [''] : config.routingKeys;
    for (const routingKey of keys) bindings.push({ queue: config.retryQueue, exchange: config.retryExchange, routingKey });
  }
  if (unrouted) bindings.push({ queue: unrouted.queue, exchange: unrouted.exchange, routingKey: '' });
  const plan: TopologyPlan = { exchanges, queues, bindings };
  if (config.existingMainQueue === true) plan.existingMainQueue = true;
  if (retryRoute(config) === 'broker') plan.needsBrokerRetry = true;
  return plan;
}

/** What broker-native retry and jitter need of the rest of the configuration. */
function brokerRetryProblems(config: RetryTopologyConfig): string[] {
  const problems: string[] = [];
  const jitter = config.retryJitterPercent ?? 0;
  if (!Number.isFinite(jitter) || jitter < 0 || jitter > 100) problems.push('retry jitter must be 0 (none) to 100 %');
  if (config.delayedRetry !== 'broker') return problems;
  if (config.retryDelaysMs.some((ms) => ms < 1)) problems.push('broker-native delayed retry needs retry delays of at least 1 ms');
  const type = config.mainQueueArguments[QUEUE_TYPE];
  if (type !== undefined && type !== 'quorum') problems.push(`broker-native delayed retry needs a quorum main queue (queue type quorum), the main queue is ${JSON.stringify(type)}`);
  if (jitter > 0) problems.push('retry jitter works on retry queues: broker-native delayed retry has none, set the jitter to 0');
  if (config.existingMainQueue === true) problems.push("broker-native delayed retry sets the main queue's arguments: it cannot use an existing main queue (choose retry queues)");
  if ((config.partitions ?? 0) > 1) problems.push('a partitioned configuration holds a failed message in its partition (ordered): broker-native delayed retry does not apply there (choose retry queues)');
  return problems;
}
