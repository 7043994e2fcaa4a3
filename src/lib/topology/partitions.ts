/**
 * Partitioned ordered mode as plain data: N partition queues `<main queue>.0` … `<main queue>.N-1`,
 * each an ordered queue of its own (single active consumer, its own retry queue, the parking queue
 * shared), fed by one partition exchange `<main queue>.partitions` that routes a message by its key.
 * Pure (the editor runs it too).
 *
 * Routing: through RabbitMQ's consistent-hash exchange (`x-consistent-hash`, plugin
 * rabbitmq_consistent_hash_exchange) when chosen, each partition bound with weight 1 and the key as
 * the routing key; else a direct exchange, each partition bound with its number, and the publisher
 * computes the number: {@link partitionOf} (FNV-1a, 32 bits, of the key's UTF-8 bytes, mod N) — a pure
 * function, the same on every instance and in every version of the package.
 */

/** The fields of a retry configuration (plan.ts's RetryTopologyConfig) that partitioning reads and sets. */
export interface PartitionFields {
  mainQueue: string;
  retryQueue: string;
  mainExchange: string;
  mainExchangeType: string;
  routingKeys: string[];
  retryExchange: string;
  alternateExchange?: string;
  unroutedQueue?: string;
  singleActiveConsumer?: boolean;
  partitions?: number;
  partitionRouting?: PartitionRoutingChoice;
  existingMainQueue?: boolean;
}

/** How a partitioned configuration routes: chosen, or `auto` (the consistent-hash exchange when the broker has it). */
export type PartitionRoutingChoice = 'auto' | 'consistent-hash' | 'computed';
/** The routing a partitioned configuration uses once `auto` is resolved. */
export type PartitionRouting = 'consistent-hash' | 'computed';
export const PARTITION_ROUTINGS: readonly PartitionRoutingChoice[] = ['auto', 'consistent-hash', 'computed'];

export const CONSISTENT_HASH_EXCHANGE = 'x-consistent-hash';
/** The most partitions a configuration may have: each is a queue, a retry queue and a consumer channel per instance. */
export const MAX_PARTITIONS = 256;

/** FNV-1a, 32 bits, over the UTF-8 bytes of a string: stable across instances, platforms and versions. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The partition (0 … count-1) of a key: FNV-1a-32 of its UTF-8 bytes, mod count. */
export function partitionOf(key: string, count: number): number {
  return fnv1a32(key) % count;
}

/**
 * How evenly keys spread: the busiest partition's count over the mean (1 is perfectly even), given each
 * partition's count. Issue 53's targets for 8 partitions: ≤ 1.25 for 1 000 keys, ≤ 1.6 for 60.
 */
export function busiestShare(counts: readonly number[]): number {
  const total = counts.reduce((sum, n) => sum + n, 0);
  return total === 0 ? 1 : Math.max(...counts) / (total / counts.length);
}

/** A message key as text: a string as is, a finite number or a boolean as its decimal text; undefined for anything else. */
export function partitionKeyText(key: unknown): string | undefined {
  if (typeof key === 'string') return key === '' ? undefined : key;
  if ((typeof key === 'number' && Number.isFinite(key)) || typeof key === 'bigint' || typeof key === 'boolean') return String(key);
  return undefined;
}

/** Whether a configuration is partitioned (2 partitions or more). */
export function isPartitioned(config: Pick<PartitionFields, 'partitions'>): boolean {
  return (config.partitions ?? 0) > 1;
}

export function partitionQueueName(mainQueue: string, index: number): string {
  return `${mainQueue}.${index}`;
}

export function partitionExchangeName(mainQueue: string): string {
  return `${mainQueue}.partitions`;
}

/** Every partition queue's name, in order. */
export function partitionQueueNames(config: Pick<PartitionFields, 'mainQueue' | 'partitions'>): string[] {
  return Array.from({ length: isPartitioned(config) ? (config.partitions ?? 0) : 0 }, (_, i) => partitionQueueName(config.mainQueue, i));
}

/** The routing a choice means when nothing is known of the broker: `auto` counts as computed. */
export function staticRouting(config: Pick<PartitionFields, 'partitionRouting'>): PartitionRouting {
  return config.partitionRouting === 'consistent-hash' ? 'consistent-hash' : 'computed';
}

/**
 * Where a publish of this key goes: the partition exchange, with the key itself (the consistent-hash
 * exchange hashes it) or the partition's number as the routing key.
 */
export function partitionTarget(config: Pick<PartitionFields, 'mainQueue' | 'partitions'>, routing: PartitionRouting, key: string): { exchange: string; routingKey: string; partition?: number } {
  const exchange = partitionExchangeName(config.mainQueue);
  if (routing === 'consistent-hash') return { exchange, routingKey: key };
  const partition = partitionOf(key, config.partitions ?? 1);
  return { exchange, routingKey: String(partition), partition };
}

/**
 * The ordered topology of one partition: its queue `<main>.<i>` with single active consumer, its own
 * retry queue `<retry>.<i>` (a retry comes back to its own partition), the shared parking queue, and
 * its binding on the partition exchange (weight 1 on the consistent-hash exchange, else its number).
 */
export function partitionTopology<T extends PartitionFields>(config: T, index: number, routing: PartitionRouting): T {
  const part: T = { ...config };
  delete part.partitions;
  delete part.partitionRouting;
  return {
    ...part,
    mainQueue: partitionQueueName(config.mainQueue, index),
    retryQueue: `${config.retryQueue}.${index}`,
    mainExchange: partitionExchangeName(config.mainQueue),
    mainExchangeType: routing === 'consistent-hash' ? CONSISTENT_HASH_EXCHANGE : 'direct',
    routingKeys: [routing === 'consistent-hash' ? '1' : String(index)],
    alternateExchange: '',
    unroutedQueue: '',
    singleActiveConsumer: true,
  };
}

/** What a partitioned configuration may not have, as sentences; empty when it is not partitioned or fine. */
export function partitionProblems(config: PartitionFields): string[] {
  if (config.partitions === undefined || config.partitions <= 1) {
    return config.partitions !== undefined && (!Number.isInteger(config.partitions) || config.partitions < 0) ? ['partitions must be a whole number: 0 or 1 (not partitioned), or 2 to 256'] : [];
  }
  const problems: string[] = [];
  if (!Number.isInteger(config.partitions) || config.partitions > MAX_PARTITIONS) problems.push(`partitions must be a whole number: 0 or 1 (not partitioned), or 2 to ${MAX_PARTITIONS}`);
  if (config.mainExchange !== '' || config.routingKeys.length > 0) problems.push(`a partitioned configuration publishes through its own exchange '${partitionExchangeName(config.mainQueue)}': leave the main exchange and routing keys empty`);
  if (config.retryExchange !== '') problems.push('a partitioned configuration retries each partition to its own retry queue: leave the retry exchange empty');
  if ((config.alternateExchange ?? '') !== '') problems.push('a partitioned configuration cannot have an alternate exchange (every key routes to a partition)');
  if (config.existingMainQueue === true) problems.push("a partitioned configuration declares its own partition queues: it cannot use an existing main queue (turn 'existing queue' off)");
  if (config.partitionRouting !== undefined && !PARTITION_ROUTINGS.includes(config.partitionRouting)) problems.push(`partition routing '${config.partitionRouting as string}' is not one of ${PARTITION_ROUTINGS.join(', ')}`);
  return problems;
}
