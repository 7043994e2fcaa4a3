/**
 * `park-replay`: the runbook as a node. Each input replays parked messages of a retry config back to
 * where they were first published (confirmed), peeks at them without removing them, or purges them.
 */
import { type Node, type NodeAPI, type NodeDef, type NodeMessage, type NodeStatus } from '../shared/node-red';
import { readNumberField, reasonFilterProblem } from '../../lib/rules';
import { NUMBER_FIELDS, PARK_ACTIONS } from '../shared/properties';
import { translator, type Translate } from '../shared/i18n';
import { runParkingAction, type ParkAction } from '../shared/parking-actions';
import { findRetryConfig } from '../shared/retry-config-node';
import { registerEditEndpoint } from './edit-endpoint';
import { registerParkingEndpoints } from './parking-endpoints';

/** The action of one msg: the node's, or with *set by msg.topic* the msg's topic. */
function actionOf(configured: unknown, msg: NodeMessage): ParkAction {
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
function resultOf(action: ParkAction, payload: Record<string, unknown>): { action: ParkAction; count: number; remaining: number } & Record<string, unknown> {
  const count = action === 'peek' ? (payload.messages as unknown[]).length : Number(action === 'purge' ? payload.purged : action === 'groups' ? payload.grouped : payload.replayed);
  return { action, count, remaining: Number(payload.remaining ?? payload.total), ...payload };
}

function resultStatus(result: ReturnType<typeof resultOf>, t: Translate): NodeStatus {
  const { action, count, remaining: left } = result;
  const fill = left > 0 ? 'yellow' : 'green';
  if (action === 'peek') return { fill, shape: 'ring', text: t('park-replay.status.peeked', { count, left }) };
  if (action === 'groups') return { fill, shape: 'ring', text: t('park-replay.status.grouped', { count: String((result.groups as unknown[]).length), left }) };
  if (action === 'purge') return { fill, shape: 'dot', text: t('park-replay.status.purged', { count: String(count), left }) };
  return { fill, shape: 'dot', text: t('park-replay.status.replayed', { count: String(count), left }) };
}

export = function register(RED: NodeAPI): void {
  function ParkReplay(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const t = translator(RED);
    const config = findRetryConfig(RED, def.config);
    const read = readNumberField(def.max, NUMBER_FIELDS['park-replay'].max);
    const reason = typeof def.reason === 'string' ? def.reason.trim() : '';
    const reasonProblem = reasonFilterProblem(reason);
    const problem = 'problem' in read ? read.problem : reasonProblem ? `reason: ${reasonProblem.text}` : undefined;
    if (problem) node.status({ fill: 'red', shape: 'ring', text: problem });
    const configuredMax = 'value' in read ? read.value : 100;
    const resetAttempts = def.resetAttempts !== false;
    let running = false;
    node.on('input', (msg, send, done) => {
      const topology = config?.topology;
      const broker = config?.broker;
      if (problem) {
        done(new Error(`parking: ${problem}`));
        return;
      }
      if (!topology || !broker) {
        done(new Error(`parking: ${config ? config.problems.join('; ') || 'no broker' : 'no retry configuration selected'}`));
        return;
      }
      let action: ParkAction;
      try {
        action = actionOf(def.action, msg);
      } catch (err) {
        done(err as Error);
        return;
      }
      if (running) {
        node.warn(`${action}: the parking queue is busy with an earlier msg; this one is ignored`);
        done();
        return;
      }
      running = true;
      node.status({ fill: 'blue', shape: 'dot', text: t('park-replay.status.running', { action }) });
      const max = typeof msg.max === 'number' && msg.max > 0 ? Math.floor(msg.max) : configuredMax;
      // The connection is held only while working: an idle node keeps none open.
      // The node's reason filter, unless the msg brings its own.
      const source = reason !== '' && msg.reason === undefined ? { ...msg, reason } : msg;
      runParkingAction(action, source, config, { max, resetAttempts, userId: node.id })
        .then(
          (payload) => {
            const result = resultOf(action, payload);
            node.status(resultStatus(result, t));
            msg.payload = result;
            send(msg);
            done();
          },
          (err: unknown) => {
            node.status({ fill: 'red', shape: 'ring', text: t('park-replay.status.failed', { action }) });
            done(err instanceof Error ? err : new Error(String(err)));
          },
        )
        .finally(() => {
          running = false;
        });
    });
  }
  RED.nodes.registerType('park-replay', ParkReplay);
  registerParkingEndpoints(RED);
  registerEditEndpoint(RED);
};
