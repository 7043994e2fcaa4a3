/**
 * outbox-relay's properties: its number fields. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { MAX_TIMER_SECONDS, type NumberField } from '../../lib/rules/number-fields';

export const RELAY_NUMBERS = {
  batchSize: { label: 'batch', fallback: 100, min: 1, max: 10_000, integer: true },
  pollSeconds: { label: 'poll every', fallback: 5, min: 0.05, max: MAX_TIMER_SECONDS, unit: 's' },
  maxAttempts: { label: 'max attempts', fallback: 10, min: 1, integer: true },
  backoffSeconds: { label: 'first backoff', fallback: 1, min: 0.01, max: MAX_TIMER_SECONDS, unit: 's' },
  backoffMaxSeconds: { label: 'longest backoff', fallback: 300, min: 0.01, max: MAX_TIMER_SECONDS, unit: 's' },
  retentionDays: { label: 'keep sent rows', fallback: 7, min: 0, max: 3650, unit: 'days' },
} as const satisfies Record<string, NumberField>;
