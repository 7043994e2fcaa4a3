/**
 * What the node types' property tables share (each node's own are in its folder, `properties.ts`):
 * listing a union's values, the values two node types take (topology modes, parking actions, the
 * outbox table's default), and the versions of a node's properties — which a saved flow knows, and
 * what an older one's missing properties mean. Pure: the editor runs it too.
 */
import type { NumberField } from '../../lib/rules/number-fields';
import type { TopologyMode } from '../../lib/topology/plan';
import { stringProp } from './node-red';

/** Every value of a union, listed once: the compiler says when the list misses one. */
export function allOf<T extends string>() {
  return <L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : never)): L => list;
}

export const TOPOLOGY_MODES = allOf<TopologyMode>()(['declare', 'check'] as const);
/** The outbox table's name when none is given. */
export const DEFAULT_OUTBOX_TABLE = 'rabbitmq_retry_outbox';

/** The outbox table an outbox write or relay node names: its PostgreSQL node, the table, the topology mode (outboxTarget() checks both). */
export interface OutboxTableProperties {
  /** The retry-postgres node's id ('' for none). */
  postgres: string;
  /** The table's name as given, or the default. */
  table: string;
  mode: string;
}

export function outboxTableProperties(def: Record<string, unknown>): OutboxTableProperties {
  return { postgres: stringProp(def.postgres), table: stringProp(def.table) || DEFAULT_OUTBOX_TABLE, mode: stringProp(def.mode, 'declare') };
}

/** What the parking queue's actions are (the park-replay node runs them, the console too). */
export const PARK_ACTIONS = ['replay', 'peek', 'purge', 'groups'] as const;
export type ParkAction = (typeof PARK_ACTIONS)[number];

/**
 * Properties a node type gained after its first release, with the value a flow saved before them
 * means (the runtime's behaviour then). A node's `version` property records which of them its saved
 * flow knows: the editor fills the rest in when the dialog opens and saves the current version.
 * Number fields mean their fallback (the node's number table); others name their value.
 */
export interface PropertyVersions {
  version: number;
  added: Record<string, { since: number; value?: string }>;
}

/** The version a saved node is at: none saved means 1, the first release. */
export function savedVersion(props: { version?: unknown }): number {
  const n = Number(props.version);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** Properties an older saved node lacks, with the value they stand for (a number field's: its fallback in `numbers`). */
export function missingProperties(versions: PropertyVersions, numbers: Record<string, NumberField>, props: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const version = savedVersion(props);
  for (const [name, added] of Object.entries(versions.added)) {
    const field = numbers[name];
    const value = added.value ?? (field ? String(field.fallback) : undefined);
    if (added.since > version && props[name] === undefined && value !== undefined) out[name] = value;
  }
  return out;
}
