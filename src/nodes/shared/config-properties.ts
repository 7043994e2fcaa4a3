/**
 * retry-config's properties (shared: the nodes that use a retry-config read its definition with them too): its number fields and the properties it gained after its first release. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import type { NumberField } from '../../lib/rules/number-fields';
import type { PropertyVersions } from './properties';

export const CONFIG_NUMBERS = {
  maxAttempts: { label: 'max attempts', fallback: 3, min: 1, integer: true },
  maxAge: { label: 'max age', fallback: 0, min: 0, unit: 's' },
  // Issue 42: partitioned ordered mode (0 or 1: one main queue, as before).
  partitions: { label: 'partitions', fallback: 0, min: 0, max: 256, integer: true },
  retryJitter: { label: 'retry jitter', fallback: 0, min: 0, max: 100, unit: '%' },
} as const satisfies Record<string, NumberField>;

// --- issue 26 (H4): error rules (absent: none, every failure transient) ---
// --- issue 42: partitions (absent: not partitioned); issue 39: broker-native delayed retry and jitter (absent: retry queues, no jitter) ---
// --- issue 53: the queue type of the main and parking queues (absent: the extra arguments say it, classic unless they name another) ---
export const CONFIG_VERSIONS: PropertyVersions = {
  version: 5,
  added: { maxAge: { since: 2 }, errorRules: { since: 3, value: '[]' }, partitions: { since: 4 }, partitionRouting: { since: 4, value: 'auto' }, delayedRetry: { since: 4, value: 'queues' }, retryJitter: { since: 4 }, queueType: { since: 5, value: '' } },
};
