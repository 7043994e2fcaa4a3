/**
 * retry-dedupe's properties: its number fields, its store kinds and its default table. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { MAX_TIMER_SECONDS, type NumberField } from '../../lib/rules/number-fields';

export const DEDUPE_KINDS = ['memory', 'redis', 'postgres'] as const;
/** The deduplication table's name when none is given. */
export const DEFAULT_DEDUPE_TABLE = 'rabbitmq_retry_dedupe';

export const DEDUPE_NUMBERS = {
  retentionHours: { label: 'keep processed keys', fallback: 24, min: 0.001, max: 24 * 365, unit: 'h' },
  leaseSeconds: { label: 'claim lease', fallback: 300, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
  maxKeys: { label: 'most keys in memory', fallback: 100_000, min: 1, integer: true },
} as const satisfies Record<string, NumberField>;
