/**
 * The retry configuration and its plan as types: what a retry topology is configured with, and the
 * exchanges, queues and bindings it stands for (plan.ts makes the one from the other).
 */
import type { QueueArguments } from './arguments';
import type { DelayedRetry } from './broker-retry';
import type { PartitionRoutingChoice } from './partitions';

export type ExchangeType = 'direct' | 'topic' | 'fanout' | 'headers' | 'x-consistent-hash';
/** The types a user may choose for the main and retry exchanges (a partition exchange's type is the package's). */
export const EXCHANGE_TYPES: readonly ExchangeType[] = ['direct', 'topic', 'fanout', 'headers'];

/** `declare`: assert everything with its arguments. `check`: passive checks only, never a declare. */
export type TopologyMode = 'declare' | 'check';

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
  /**
   * Time a message waits before its next attempt (`x-message-ttl`), in ms: one delay, or backoff tiers
   * (one queue per delay: a per-message TTL would block at the head of a shared queue), the last
   * tier repeating.
   */
  retryDelaysMs: number[];
  parkingQueue: string;
  /** Attempts in all, the first delivery included. */
  maxAttempts: number;
  /** A message older than this is parked instead of retried; 0: no limit. */
  maxAgeMs: number;
  /** Extra arguments per queue, merged with the ones the topology sets. */
  mainQueueArguments: QueueArguments;
  retryQueueArguments: QueueArguments;
  parkingQueueArguments: QueueArguments;
  /**
   * Declared as the main exchange's `alternate-exchange` (a fanout) when set: messages published to
   * the main exchange that no binding routes land in {@link unroutedQueue} instead of being dropped,
   * whoever published them. Empty or absent: none.
   */
  alternateExchange?: string;
  /** The queue bound to the alternate exchange; default `<main exchange>.unrouted`. */
  unroutedQueue?: string;
  /**
   * Declare the main queue with `x-single-active-consumer: true` (ordered mode): of all consumers,
   * in every Node-RED instance, only one gets messages; the others stand by and take over in order.
   */
  singleActiveConsumer?: boolean;
  /**
   * Partitioned ordered mode (2 or more): the main queue becomes N ordered partition queues
   * `<main queue>.0` … fed by the exchange `<main queue>.partitions`, routed by a message key (see partitions.ts).
   */
  partitions?: number;
  /** How the partition exchange routes: `auto` (default), `consistent-hash` or `computed`. */
  partitionRouting?: PartitionRoutingChoice;
  /**
   * Check mode on a main queue that belongs to someone else (a flow converted from another AMQP
   * package, docs/migration.md): the exchanges and the main queue are only checked — never redeclared,
   * so their arguments cannot conflict (no 406) — the main queue created without arguments only when
   * it does not exist, and bound with its routing keys (a binding never conflicts). The retry and
   * parking queues are this configuration's own and are declared. The main queue has no dead-letter
   * exchange of the package, so retries always republish (route `republish`).
   */
  existingMainQueue?: boolean;
  /**
   * How a retry waits. `queues` (default): in the retry queues, on every RabbitMQ version. `broker`:
   * in the quorum main queue itself, by RabbitMQ 4.3+'s delayed retry (`x-delayed-retry-*`): no retry
   * queue or exchange; the first delay is the broker's minimum, the longest its maximum.
   */
  delayedRetry?: DelayedRetry;
  /**
   * Spreads the retries of one tier over up to this percentage longer (0 or absent: none): each tier
   * gets a few sub-tier queues (retry-queues.ts), so a shared outage does not return every message at once.
   */
  retryJitterPercent?: number;
}

export interface PlannedExchange {
  name: string;
  type: ExchangeType;
  /** Exchange arguments the configuration sets (`alternate-exchange`). */
  arguments?: Record<string, unknown>;
}

export interface PlannedQueue {
  role: 'main' | 'retry' | 'parking' | 'unrouted';
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
  /** See RetryTopologyConfig.existingMainQueue: check the main queue and exchanges, declare the rest. */
  existingMainQueue?: boolean;
  /** Set when the plan needs RabbitMQ 4.3+ (broker-native delayed retry): checked before anything is declared or checked. */
  needsBrokerRetry?: boolean;
}
