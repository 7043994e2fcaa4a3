/**
 * The node types' property tables, for the runtime (which reads flows with them) and the editor
 * (which validates and fills in dialogs with the same tables, bundled into its script): number
 * fields with their ranges and fallbacks, the values of choice properties, and the properties each
 * node type gained after its first release. Pure: the editor runs it too.
 */
import type { DecodeMode } from '../../lib/message/payload';
import { DEFAULT_PUBLISH_LIMITS } from '../../lib/publish/limits';
import { MAX_TIMER_SECONDS, type NumberField } from '../../lib/rules/number-fields';
import type { InvalidBodyPolicy } from '../../lib/settle/decide';
import type { TopologyMode } from '../../lib/topology/plan';

import { NODE_TYPE } from './node-types';

const MIB = 1024 * 1024;

/** Every value of a union, listed once: the compiler says when the list misses one. */
function allOf<T extends string>() {
  return <L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : never)): L => list;
}

export const TOPOLOGY_MODES = allOf<TopologyMode>()(['declare', 'check'] as const);
export const DECODE_MODES = allOf<DecodeMode>()(['auto', 'json', 'string', 'buffer'] as const);
export const INVALID_BODY_ACTIONS = allOf<InvalidBodyPolicy>()(['park', 'error'] as const);

export const CONSUMER_MODES = ['retry', 'ordered'] as const;
export const SETTLE_ACTIONS = ['ack', 'retry'] as const;
export const PUBLISH_MODES = ['publish', 'reply'] as const;
/** What the park-replay node does with the parking queue. */
/** The deduplication table's name when none is given. */
export const DEFAULT_DEDUPE_TABLE = 'rabbitmq_retry_dedupe';
/** The outbox table's name when none is given. */
export const DEFAULT_OUTBOX_TABLE = 'rabbitmq_retry_outbox';
export const DEDUPE_KINDS = ['memory', 'redis', 'postgres'] as const;
export const DEDUPE_NO_KEY = ['process', 'park'] as const;
export const DEDUPE_STORE_DOWN = ['pause', 'process'] as const;

export const PARK_ACTIONS = ['replay', 'peek', 'purge', 'groups'] as const;
export type ParkAction = (typeof PARK_ACTIONS)[number];
/** The node's setting: an action, or `topic` (msg.topic names it). */
export const PARK_NODE_ACTIONS = [...PARK_ACTIONS, 'topic'] as const;

/** Every number property of every node type: the runtime reads them with these, the editor validates with them. */
export const NUMBER_FIELDS = {
  [NODE_TYPE.retryBroker]: {
    port: { label: 'port', fallback: 5672, min: 1, max: 65535, integer: true },
    heartbeat: { label: 'heartbeat', fallback: 30, min: 0, max: 65535, integer: true, unit: 's' },
    reconnectMax: { label: 'maximum reconnect delay', fallback: 5, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
    bufferMessages: { label: 'publish buffer (messages)', fallback: DEFAULT_PUBLISH_LIMITS.maxMessages, min: 1, integer: true },
    bufferMiB: { label: 'publish buffer (MiB)', fallback: DEFAULT_PUBLISH_LIMITS.maxBytes / MIB, min: 0.001, unit: 'MiB' },
  },
  [NODE_TYPE.retryConfig]: {
    maxAttempts: { label: 'max attempts', fallback: 3, min: 1, integer: true },
    maxAge: { label: 'max age', fallback: 0, min: 0, unit: 's' },
    // Issue 42: partitioned ordered mode (0 or 1: one main queue, as before).
    partitions: { label: 'partitions', fallback: 0, min: 0, max: 256, integer: true },
    retryJitter: { label: 'retry jitter', fallback: 0, min: 0, max: 100, unit: '%' },
  },
  [NODE_TYPE.retryConsumer]: {
    prefetch: { label: 'prefetch', fallback: 10, min: 1, max: 65535, integer: true },
    orderedPause: { label: 'pause', fallback: 5, min: 0, max: MAX_TIMER_SECONDS, unit: 's' },
    settleTimeout: { label: 'settle timeout', fallback: 60, min: 0, max: MAX_TIMER_SECONDS, unit: 's' },
    parkingWatch: { label: 'watch parking', fallback: 30, min: 0, max: MAX_TIMER_SECONDS, unit: 's' },
    statsEvery: { label: 'stats every', fallback: 60, min: 0, max: MAX_TIMER_SECONDS, unit: 's' },
    // Downstream protection (issue 26): the kill switch (with `circuit` on) and the rate limit.
    circuitActivation: { label: 'activation threshold', fallback: 20, min: 1, integer: true },
    circuitTripPercent: { label: 'trip threshold', fallback: 15, min: 1, max: 100, unit: '%' },
    circuitWindow: { label: 'window', fallback: 10, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
    circuitRestart: { label: 'restart timeout', fallback: 30, min: 0.1, max: MAX_TIMER_SECONDS, unit: 's' },
    circuitRestartMax: { label: 'longest restart timeout', fallback: 300, min: 0.1, max: MAX_TIMER_SECONDS, unit: 's' },
    circuitProbes: { label: 'probes', fallback: 5, min: 1, max: 65535, integer: true },
    rateLimit: { label: 'rate limit', fallback: 0, min: 0, max: 1_000_000, unit: 'messages/s' },
    // Batch mode (issue 51, with `batch` on): up to batchSize deliveries per msg, the first waiting at most batchWait.
    batchSize: { label: 'batch size', fallback: 500, min: 1, max: 10_000, integer: true },
    batchWait: { label: 'batch wait', fallback: 200, min: 0, max: 60_000, unit: 'ms' },
  },
  [NODE_TYPE.parkReplay]: {
    max: { label: 'at most', fallback: 100, min: 1, integer: true },
  },
  [NODE_TYPE.retryConsole]: {
    every: { label: 'every', fallback: 10, min: 0, max: MAX_TIMER_SECONDS, unit: 's' },
    minutes: { label: 'history', fallback: 60, min: 1, max: 1440, integer: true, unit: 'minutes' },
  },
  [NODE_TYPE.retryDedupe]: {
    retentionHours: { label: 'keep processed keys', fallback: 24, min: 0.001, max: 24 * 365, unit: 'h' },
    leaseSeconds: { label: 'claim lease', fallback: 300, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
    maxKeys: { label: 'most keys in memory', fallback: 100_000, min: 1, integer: true },
  },
  [NODE_TYPE.outboxRelay]: {
    batchSize: { label: 'batch', fallback: 100, min: 1, max: 10_000, integer: true },
    pollSeconds: { label: 'poll every', fallback: 5, min: 0.05, max: MAX_TIMER_SECONDS, unit: 's' },
    maxAttempts: { label: 'max attempts', fallback: 10, min: 1, integer: true },
    backoffSeconds: { label: 'first backoff', fallback: 1, min: 0.01, max: MAX_TIMER_SECONDS, unit: 's' },
    backoffMaxSeconds: { label: 'longest backoff', fallback: 300, min: 0.01, max: MAX_TIMER_SECONDS, unit: 's' },
    retentionDays: { label: 'keep sent rows', fallback: 7, min: 0, max: 3650, unit: 'days' },
  },
  [NODE_TYPE.retryPostgres]: {
    port: { label: 'port', fallback: 5432, min: 1, max: 65535, integer: true },
    poolSize: { label: 'connections', fallback: 10, min: 1, max: 1000, integer: true },
  },
} as const satisfies Record<string, Record<string, NumberField>>;

/**
 * Properties a node type gained after its first release, with the value a flow saved before them
 * means (the runtime's behaviour then). A node's `version` property records which of them its saved
 * flow knows: the editor fills the rest in when the dialog opens and saves the current version.
 */
export const PROPERTY_VERSIONS: Record<string, { version: number; added: Record<string, { since: number; value?: string }> }> = {
  // Number fields mean their NUMBER_FIELDS fallback; others name their value.
  [NODE_TYPE.retryBroker]: {
    version: 3,
    // A field without its type is text (`${VAR}` text included), as before the env type existed.
    added: { bufferMessages: { since: 2 }, bufferMiB: { since: 2 }, urlType: { since: 3, value: 'str' }, hostType: { since: 3, value: 'str' }, managementUrlType: { since: 3, value: 'str' } },
  },
  // --- issue 27 (H10): park-replay's reason filter (absent: every reason) ---
  [NODE_TYPE.parkReplay]: { version: 3, added: { action: { since: 2, value: 'replay' }, reason: { since: 3, value: '' } } },
  // --- issue 26 (H4): error rules (absent: none, every failure transient) ---
  // --- issue 42: partitions (absent: not partitioned); issue 39: broker-native delayed retry and jitter (absent: retry queues, no jitter) ---
  // --- issue 53: the queue type of the main and parking queues (absent: the extra arguments say it, classic unless they name another) ---
  [NODE_TYPE.retryConfig]: { version: 5, added: { maxAge: { since: 2 }, errorRules: { since: 3, value: '[]' }, partitions: { since: 4 }, partitionRouting: { since: 4, value: 'auto' }, delayedRetry: { since: 4, value: 'queues' }, retryJitter: { since: 4 }, queueType: { since: 5, value: '' } } },
  [NODE_TYPE.retryConsumer]: {
    version: 6,
    added: {
      mode: { since: 2, value: 'retry' },
      orderedPause: { since: 2 },
      parkingWatch: { since: 2 },
      statsEvery: { since: 3 },
      dedupe: { since: 4, value: '' },
      dedupeKeyType: { since: 4, value: 'messageId' },
      dedupeKey: { since: 4, value: '' },
      dedupeNoKey: { since: 4, value: 'process' },
      dedupeStoreDown: { since: 4, value: 'pause' },
      circuitActivation: { since: 5 },
      circuitTripPercent: { since: 5 },
      circuitWindow: { since: 5 },
      circuitRestart: { since: 5 },
      circuitRestartMax: { since: 5 },
      circuitProbes: { since: 5 },
      rateLimit: { since: 5 },
      // --- issue 51: batch mode (absent `batch`: off) ---
      batchSize: { since: 6 },
      batchWait: { since: 6 },
    },
  },
};

/** The kill switch's longest restart timeout must not be below its first one (both in seconds). */
export function restartMaxProblem(restart: number, restartMax: number): string | undefined {
  return restartMax < restart ? `longest restart timeout is ${restartMax}: must be at least the restart timeout (${restart} s)` : undefined;
}

/** The version a saved node is at: none saved means 1, the first release. */
export function savedVersion(props: { version?: unknown }): number {
  const n = Number(props.version);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** Properties an older saved node lacks, with the value they stand for. */
export function missingProperties(type: string, props: Record<string, unknown>): Record<string, string> {
  const table = PROPERTY_VERSIONS[type];
  const out: Record<string, string> = {};
  if (!table) return out;
  const version = savedVersion(props);
  for (const [name, added] of Object.entries(table.added)) {
    const field = (NUMBER_FIELDS as Record<string, Record<string, NumberField> | undefined>)[type]?.[name];
    const value = added.value ?? (field ? String(field.fallback) : undefined);
    if (added.since > version && props[name] === undefined && value !== undefined) out[name] = value;
  }
  return out;
}
