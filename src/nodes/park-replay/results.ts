/** A park-replay msg's action, and what its result says and shows (pure). */
import type { NodeMessage, NodeStatus } from '../shared/node-red';
import { PARK_ACTIONS, type ParkAction } from '../shared/properties';
import type { Translate } from '../shared/i18n';

export type ParkResult = ReturnType<typeof resultOf>;

/** The action of one msg: the node's, or with *set by msg.topic* the msg's topic. */
export function actionOf(configured: unknown, msg: NodeMessage): ParkAction {
  if (configured !== 'topic') return PARK_ACTIONS.find((a) => a === configured) ?? 'replay';
  const action = PARK_ACTIONS.find((a) => a === msg.topic);
  if (!action) throw new Error(`msg.topic must be one of ${PARK_ACTIONS.join(', ')} (got ${JSON.stringify(msg.topic ?? null)})`);
  return action;
}

/**
 * What every action sends, first: `action`, `count` (the messages it replayed, peeked at or purged)
 * and `remaining` (the messages in the parking queue after it), so one debug node reads any action;
 * then the action's own fields.
 */
export function resultOf(action: ParkAction, payload: Record<string, unknown>): { action: ParkAction; count: number; remaining: number } & Record<string, unknown> {
  const count = action === 'peek' ? (payload.messages as unknown[]).length : Number(action === 'purge' ? payload.purged : action === 'groups' ? payload.grouped : payload.replayed);
  return { action, count, remaining: Number(payload.remaining ?? payload.total), ...payload };
}

export function resultStatus(result: ParkResult, t: Translate): NodeStatus {
  const { action, count, remaining: left } = result;
  const fill = left > 0 ? 'yellow' : 'green';
  if (action === 'peek') return { fill, shape: 'ring', text: t('park-replay.status.peeked', { count, left }) };
  if (action === 'groups') return { fill, shape: 'ring', text: t('park-replay.status.grouped', { count: String((result.groups as unknown[]).length), left }) };
  if (action === 'purge') return { fill, shape: 'dot', text: t('park-replay.status.purged', { count: String(count), left }) };
  if (result.state === 'stopped') return { fill: 'yellow', shape: 'ring', text: t('park-replay.status.canaryParked', { count: String(result.parkedAgain), replayed: String(count) }) };
  if (result.state === 'cancelled') return { fill: 'yellow', shape: 'ring', text: t('park-replay.status.cancelled', { count: String(count), left }) };
  return { fill, shape: 'dot', text: t('park-replay.status.replayed', { count: String(count), left }) };
}

