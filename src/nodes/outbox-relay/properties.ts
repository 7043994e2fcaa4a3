/**
 * outbox-relay's properties: its number fields, and its settings read from its saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { MAX_TIMER_SECONDS, readNumberFields, type NumberField, type NumberValues } from '../../lib/rules/number-fields';
import { stringProp } from '../shared/node-red';
import { outboxTableProperties, type OutboxTableProperties } from '../shared/properties';

export const RELAY_NUMBERS = {
  batchSize: { label: 'batch', fallback: 100, min: 1, max: 10_000, integer: true },
  pollSeconds: { label: 'poll every', fallback: 5, min: 0.05, max: MAX_TIMER_SECONDS, unit: 's' },
  maxAttempts: { label: 'max attempts', fallback: 10, min: 1, integer: true },
  backoffSeconds: { label: 'first backoff', fallback: 1, min: 0.01, max: MAX_TIMER_SECONDS, unit: 's' },
  backoffMaxSeconds: { label: 'longest backoff', fallback: 300, min: 0.01, max: MAX_TIMER_SECONDS, unit: 's' },
  retentionDays: { label: 'keep sent rows', fallback: 7, min: 0, max: 3650, unit: 'days' },
} as const satisfies Record<string, NumberField>;

export interface RelayProperties extends OutboxTableProperties {
  /** The retry-broker node's id ('' for none). */
  broker: string;
  /** Its numbers; a bad one reads as its fallback and is one of `problems`. */
  numbers: NumberValues<typeof RELAY_NUMBERS>;
  ordered: boolean;
  deleteSent: boolean;
  /** What is wrong with its numbers. */
  problems: string[];
}

export function relayProperties(def: Record<string, unknown>): RelayProperties {
  const { values, problems } = readNumberFields(def, RELAY_NUMBERS);
  return { ...outboxTableProperties(def), broker: stringProp(def.broker), numbers: values, ordered: def.ordered === true, deleteSent: def.deleteSent === true, problems };
}
