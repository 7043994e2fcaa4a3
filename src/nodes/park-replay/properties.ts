/**
 * park-replay's properties: its actions, its number field, the properties it gained after its first release, and its settings read from its saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { readNumberField, type NumberField } from '../../lib/rules/number-fields';
import { reasonFilterProblem } from '../../lib/rules/property-rules';
import { PARK_ACTIONS, type PropertyVersions } from '../shared/properties';

export type { ParkAction } from '../shared/properties';
/** The node's setting: an action, or `topic` (msg.topic names it). */
export const PARK_NODE_ACTIONS = [...PARK_ACTIONS, 'topic'] as const;

export const REPLAY_NUMBERS = {
  max: { label: 'at most', fallback: 100, min: 1, integer: true },
} as const satisfies Record<string, NumberField>;

// --- issue 27 (H10): park-replay's reason filter (absent: every reason) ---
export const REPLAY_VERSIONS: PropertyVersions = { version: 3, added: { action: { since: 2, value: 'replay' }, reason: { since: 3, value: '' } } };

export interface ParkReplaySettings {
  /** The node's action: one of PARK_NODE_ACTIONS (`topic`: set by msg.topic); anything else runs as `replay`. */
  action: unknown;
  /** How many messages an action takes unless a msg says (msg.max). */
  max: number;
  resetAttempts: boolean;
  /** The node's reason filter (empty: none), unless a msg brings its own. */
  reason: string;
  /** What is wrong with the node's properties: every msg fails with it. */
  problem: string | undefined;
}

/** The node's settings from its saved definition: a bad `max` or reason filter is its problem. */
export function parkReplaySettings(def: Record<string, unknown>): ParkReplaySettings {
  const read = readNumberField(def.max, REPLAY_NUMBERS.max);
  const reason = typeof def.reason === 'string' ? def.reason.trim() : '';
  const reasonProblem = reasonFilterProblem(reason);
  const problem = 'problem' in read ? read.problem : reasonProblem ? `reason: ${reasonProblem.text}` : undefined;
  return { action: def.action, max: 'value' in read ? read.value : REPLAY_NUMBERS.max.fallback, resetAttempts: def.resetAttempts !== false, reason, problem };
}
