/**
 * The retry topology as plain data: what exchanges, queues, arguments and bindings a retry
 * configuration means, and how to explain a difference between that and the broker.
 * Pure: applying a plan to a broker lives in topology-broker.ts.
 */

export type ExchangeType = 'direct' | 'topic' | 'fanout' | 'headers';
export const EXCHANGE_TYPES: readonly ExchangeType[] = ['direct', 'topic', 'fanout', 'headers'];

/** `declare`: assert everything with its arguments. `check`: passive checks only, never a declare. */
export type TopologyMode = 'declare' | 'check';

export type QueueArguments = Record<string, unknown>;

export interface RetryTopologyConfig {
  mode: TopologyMode;
  /** Exchange the producers publish to; empty means the default exchange (publish to the queue name). */
  mainExchange: string;
  mainExchangeType: ExchangeType;
  mainQueue: string;
  /** Binding keys of the main queue on the main exchange. */
  routingKeys: string[];
  /**
   * Exchange the main queue dead-letters to. Empty: per-queue routing through the default exchange
   * (`x-dead-letter-routing-key`), so a retried message can only come back to its own queue.
   */
  retryExchange: string;
  retryExchangeType: ExchangeType;
  retryQueue: string;
  /** Time a message waits in the retry queue (`x-message-ttl`), in ms. */
  retryDelayMs: number;
  parkingQueue: string;
  /** Attempts in all, the first delivery included. */
  maxAttempts: number;
  /** Extra arguments per queue, merged with the ones the topology sets. */
  mainQueueArguments: QueueArguments;
  retryQueueArguments: QueueArguments;
  parkingQueueArguments: QueueArguments;
}

export interface PlannedExchange {
  name: string;
  type: ExchangeType;
}

export interface PlannedQueue {
  role: 'main' | 'retry' | 'parking';
  name: string;
  arguments: QueueArguments;
}

export interface PlannedBinding {
  queue: string;
  exchange: string;
  routingKey: string;
}

export interface TopologyPlan {
  exchanges: PlannedExchange[];
  queues: PlannedQueue[];
  bindings: PlannedBinding[];
}

export const DEAD_LETTER_EXCHANGE = 'x-dead-letter-exchange';
export const DEAD_LETTER_ROUTING_KEY = 'x-dead-letter-routing-key';
export const MESSAGE_TTL = 'x-message-ttl';

/** Arguments the topology owns: a user's extra arguments may not set them differently. */
function topologyArguments(config: RetryTopologyConfig): Record<PlannedQueue['role'], QueueArguments> {
  const perQueueRouting = config.retryExchange === '';
  const main: QueueArguments = { [DEAD_LETTER_EXCHANGE]: config.retryExchange };
  const retry: QueueArguments = {
    [MESSAGE_TTL]: config.retryDelayMs,
    [DEAD_LETTER_EXCHANGE]: perQueueRouting ? '' : config.mainExchange,
  };
  if (perQueueRouting) {
    main[DEAD_LETTER_ROUTING_KEY] = config.retryQueue;
    retry[DEAD_LETTER_ROUTING_KEY] = config.mainQueue;
  }
  return { main, retry, parking: {} };
}

/** Everything wrong with a configuration, as sentences for the user; empty when it is valid. */
export function validateTopologyConfig(config: RetryTopologyConfig): string[] {
  const problems: string[] = [];
  const names: Array<[string, string]> = [
    ['main queue', config.mainQueue],
    ['retry queue', config.retryQueue],
    ['parking queue', config.parkingQueue],
  ];
  for (const [label, name] of names) {
    if (!name) problems.push(`${label} name is empty`);
    else if (name.startsWith('amq.')) problems.push(`${label} '${name}': names starting with 'amq.' are reserved by RabbitMQ`);
    else if (Buffer.byteLength(name) > 255) problems.push(`${label} name is longer than 255 bytes`);
  }
  const distinct = new Set(names.map(([, n]) => n));
  if (distinct.size !== names.length) problems.push('main, retry and parking queues must have different names');
  if (config.retryExchange !== '' && config.retryExchange === config.mainExchange) {
    problems.push('retry exchange must differ from the main exchange (a retried message would loop straight back)');
  }
  if (!Number.isInteger(config.maxAttempts) || config.maxAttempts < 1) problems.push('max attempts must be a whole number of at least 1');
  if (!Number.isInteger(config.retryDelayMs) || config.retryDelayMs < 0) problems.push('retry delay must be a whole number of milliseconds, 0 or more');
  if (!EXCHANGE_TYPES.includes(config.mainExchangeType)) problems.push(`main exchange type '${config.mainExchangeType}' is not one of ${EXCHANGE_TYPES.join(', ')}`);
  if (!EXCHANGE_TYPES.includes(config.retryExchangeType)) problems.push(`retry exchange type '${config.retryExchangeType}' is not one of ${EXCHANGE_TYPES.join(', ')}`);
  if (config.mainExchange === '' && config.routingKeys.length > 0) {
    problems.push('routing keys need a main exchange: the default exchange cannot be bound');
  }
  const owned = topologyArguments(config);
  const extras: Array<[PlannedQueue['role'], QueueArguments]> = [
    ['main', config.mainQueueArguments],
    ['retry', config.retryQueueArguments],
    ['parking', config.parkingQueueArguments],
  ];
  for (const [role, extra] of extras) {
    for (const key of Object.keys(extra)) {
      if (key in owned[role] && !sameArgumentValue(owned[role][key], extra[key])) {
        problems.push(`${role} queue argument ${key} is set by the retry topology; remove it from the extra arguments`);
      }
    }
  }
  return problems;
}

/** The exchanges, queues (with full arguments) and bindings a configuration stands for. */
export function planTopology(config: RetryTopologyConfig): TopologyPlan {
  const owned = topologyArguments(config);
  const exchanges: PlannedExchange[] = [];
  if (config.mainExchange !== '') exchanges.push({ name: config.mainExchange, type: config.mainExchangeType });
  if (config.retryExchange !== '') exchanges.push({ name: config.retryExchange, type: config.retryExchangeType });

  const queues: PlannedQueue[] = [
    { role: 'main', name: config.mainQueue, arguments: { ...config.mainQueueArguments, ...owned.main } },
    { role: 'retry', name: config.retryQueue, arguments: { ...config.retryQueueArguments, ...owned.retry } },
    { role: 'parking', name: config.parkingQueue, arguments: { ...config.parkingQueueArguments } },
  ];

  const bindings: PlannedBinding[] = [];
  if (config.mainExchange !== '') {
    // A fanout or headers exchange ignores the key; bind once with '' when none is given.
    const keys = config.routingKeys.length > 0 ? config.routingKeys : [''];
    for (const routingKey of keys) bindings.push({ queue: config.mainQueue, exchange: config.mainExchange, routingKey });
  }
  if (config.retryExchange !== '') {
    // Dead-lettered messages keep their routing key, so the retry queue is bound with the main keys
    // (a fanout retry exchange, as in the classic layout, ignores them).
    const keys = config.retryExchangeType === 'fanout' || config.routingKeys.length === 0 ? [''] : config.routingKeys;
    for (const routingKey of keys) bindings.push({ queue: config.retryQueue, exchange: config.retryExchange, routingKey });
  }
  return { exchanges, queues, bindings };
}

/**
 * Parses the JSON of extra queue arguments. Numbers stay numbers (`x-message-ttl: 3000`, not "3000").
 * Throws an Error whose message names the problem.
 */
export function parseQueueArguments(text: string | undefined | null, label: string): QueueArguments {
  if (text === undefined || text === null || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${label}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`${label}: must be a JSON object such as {"x-queue-type":"quorum"}`);
  }
  const args: QueueArguments = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (value === null) throw new Error(`${label}: ${key} is null; leave it out instead`);
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new Error(`${label}: ${key} must be a string, number or boolean`);
    }
    args[key] = value;
  }
  return args;
}

/** Numeric arguments compare by value: the broker treats `short 3000` and `long 3000` alike. */
export function sameArgumentValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  return a === b;
}

export interface ArgumentDifference {
  argument: string;
  /** Value on the broker; undefined when the broker has none. */
  broker: unknown;
  /** Value the configuration wants; undefined when it sets none. */
  config: unknown;
}

/** Arguments that differ between the broker's queue and the plan, sorted by name. */
export function diffArguments(broker: QueueArguments, config: QueueArguments): ArgumentDifference[] {
  const keys = [...new Set([...Object.keys(broker), ...Object.keys(config)])].sort();
  const out: ArgumentDifference[] = [];
  for (const argument of keys) {
    const b = broker[argument];
    const c = config[argument];
    if (b === undefined && c === undefined) continue;
    if (b !== undefined && c !== undefined && sameArgumentValue(b, c)) continue;
    // Classic is the default queue type: an explicit 'classic' on one side equals none on the other.
    if (argument === 'x-queue-type' && (b ?? 'classic') === 'classic' && (c ?? 'classic') === 'classic') continue;
    out.push({ argument, broker: b, config: c });
  }
  return out;
}

function show(value: unknown): string {
  if (value === undefined) return 'none';
  if (typeof value === 'number') return String(value);
  return `'${typeof value === 'string' ? value : JSON.stringify(value)}'`;
}

/** `queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says none` */
export function describeDifference(kind: 'queue' | 'exchange', name: string, diff: ArgumentDifference): string {
  return `${kind} '${name}': ${diff.argument} is ${show(diff.broker)} on the broker, config says ${show(diff.config)}`;
}

export interface PreconditionFailure {
  kind: 'queue' | 'exchange';
  name: string;
  argument: string;
  /** What the declare sent ("none" when it sent no value). */
  received?: string;
  /** What the broker has. */
  current?: string;
}

const INEQUIVALENT =
  /inequivalent arg '([^']+)' for (queue|exchange) '([^']*)' in vhost '[^']*': received (none|'([^']*)'|the value '([^']*)'[^:]*?) but current is (none|'([^']*)'|the value '([^']*)')/;
const INEQUIVALENT_PREFIX = /inequivalent arg '([^']+)' for (queue|exchange) '([^']*)'/;

/**
 * Reads a broker's 406 PRECONDITION_FAILED text. The broker truncates long texts, so whatever part
 * survived is returned; null when even the argument name is gone. Decisions branch on the error's
 * `code`, never on this text: it only makes the message clearer.
 */
export function parsePreconditionFailure(text: string): PreconditionFailure | null {
  const full = INEQUIVALENT.exec(text);
  if (full) {
    const failure: PreconditionFailure = { kind: full[2] as 'queue' | 'exchange', name: full[3] ?? '', argument: full[1] ?? '' };
    const received = full[5] ?? full[6] ?? (full[4] === 'none' ? 'none' : undefined);
    const current = full[8] ?? full[9] ?? (full[7] === 'none' ? 'none' : undefined);
    if (received !== undefined) failure.received = received;
    if (current !== undefined) failure.current = current;
    return failure;
  }
  const prefix = INEQUIVALENT_PREFIX.exec(text);
  if (!prefix) return null;
  return { kind: prefix[2] as 'queue' | 'exchange', name: prefix[3] ?? '', argument: prefix[1] ?? '' };
}

/** A sentence about a 406 on declare, with the arguments when the broker's text still has them. */
export function describePreconditionFailure(failure: PreconditionFailure): string {
  const onBroker = failure.current === undefined ? 'different' : failure.current === 'none' ? 'none' : `'${failure.current}'`;
  const inConfig = failure.received === undefined ? 'something else' : failure.received === 'none' ? 'none' : `'${failure.received}'`;
  return `${failure.kind} '${failure.name}': ${failure.argument} is ${onBroker} on the broker, config says ${inConfig}`;
}
