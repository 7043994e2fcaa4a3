/**
 * retry-dedupe's properties: its number fields, its store kinds and its default table, and its settings read from its (env-resolved) saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { MAX_TIMER_SECONDS, readNumberFields, type NumberField, type NumberValues } from '../../lib/rules/number-fields';
import { stringProp } from '../shared/node-red';

export const DEDUPE_KINDS = ['memory', 'redis', 'postgres'] as const;
/** The deduplication table's name when none is given. */
export const DEFAULT_DEDUPE_TABLE = 'rabbitmq_retry_dedupe';

export const DEDUPE_NUMBERS = {
  retentionHours: { label: 'keep processed keys', fallback: 24, min: 0.001, max: 24 * 365, unit: 'h' },
  leaseSeconds: { label: 'claim lease', fallback: 300, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
  maxKeys: { label: 'most keys in memory', fallback: 100_000, min: 1, integer: true },
} as const satisfies Record<string, NumberField>;

export type DedupeKind = (typeof DEDUPE_KINDS)[number];

export interface DedupeProperties {
  /** The store's kind; undefined when the definition names another (one of `problems`). */
  kind: DedupeKind | undefined;
  /** Its numbers; a bad one reads as its fallback and is one of `problems`. */
  numbers: NumberValues<typeof DEDUPE_NUMBERS>;
  /** A Redis store's server (URL, default the local one), key prefix and tls-config node's id ('' for none). */
  redis: { url: string; prefix: string | undefined; tlsConfig: string };
  /** A PostgreSQL store's retry-postgres node's id, table (default DEFAULT_DEDUPE_TABLE) and topology mode (checked by the store). */
  postgres: { id: string; table: string; mode: string };
  /** What is wrong with its numbers and its kind. */
  problems: string[];
}

export function dedupeProperties(def: Record<string, unknown>): DedupeProperties {
  const { values, problems } = readNumberFields(def, DEDUPE_NUMBERS);
  const kind = stringProp(def.kind, 'memory');
  const known = (DEDUPE_KINDS as readonly string[]).includes(kind);
  if (!known) problems.push(`store kind '${kind}' is not one of ${DEDUPE_KINDS.join(', ')}`);
  return {
    kind: known ? (kind as DedupeKind) : undefined,
    numbers: values,
    redis: { url: stringProp(def.url) || 'redis://127.0.0.1:6379', prefix: stringProp(def.prefix) || undefined, tlsConfig: stringProp(def.tlsConfig) },
    postgres: { id: stringProp(def.postgres), table: stringProp(def.table) || DEFAULT_DEDUPE_TABLE, mode: stringProp(def.mode, 'declare') },
    problems,
  };
}
