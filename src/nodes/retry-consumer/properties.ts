/**
 * retry-consumer's properties: its number fields, the values of its choices and the properties it gained after its first release. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import type { DecodeMode } from '../../lib/message/payload';
import { MAX_TIMER_SECONDS, type NumberField } from '../../lib/rules/number-fields';
import type { InvalidBodyPolicy } from '../../lib/settle/decide';
import { allOf, type PropertyVersions } from '../shared/properties';

export const DECODE_MODES = allOf<DecodeMode>()(['auto', 'json', 'string', 'buffer'] as const);
export const INVALID_BODY_ACTIONS = allOf<InvalidBodyPolicy>()(['park', 'error'] as const);
export const CONSUMER_MODES = ['retry', 'ordered'] as const;
export const DEDUPE_NO_KEY = ['process', 'park'] as const;
export const DEDUPE_STORE_DOWN = ['pause', 'process'] as const;

export const CONSUMER_NUMBERS = {
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
} as const satisfies Record<string, NumberField>;

export const CONSUMER_VERSIONS: PropertyVersions = {
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
};

/** The kill switch's longest restart timeout must not be below its first one (both in seconds). */
export function restartMaxProblem(restart: number, restartMax: number): string | undefined {
  return restartMax < restart ? `longest restart timeout is ${restartMax}: must be at least the restart timeout (${restart} s)` : undefined;
}
