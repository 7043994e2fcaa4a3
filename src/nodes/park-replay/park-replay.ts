/**
 * `park-replay`: the runbook as a node. Each input replays parked messages of a retry config back to
 * where they were first published (confirmed), peeks at them without removing them, or purges them.
 */
import { type Node, type NodeAPI, type NodeDef, type NodeMessage, type NodeStatus } from '../shared/node-red';
import { readNumberField, reasonFilterProblem } from '../../lib/rules';
import { NUMBER_FIELDS, PARK_ACTIONS } from '../shared/properties';
import { translator, type Translate } from '../shared/i18n';
import { auditedParkingAction, describeSelection, redirectFrom, startPacedReplay, type ParkAction } from '../shared/parking-actions';
import { audit } from '../shared/audit';
import { pacedOptionsFrom, type ReplayDestination } from '../../lib/parking';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { findRetryConfig } from '../shared/retry-config-node';
import { registerEditEndpoint } from './edit-endpoint';
import { registerParkingEndpoints } from './parking-endpoints';
import { registerReplayJobEndpoints } from './replay-job-endpoints';

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
  if (result.state === 'stopped') return { fill: 'yellow', shape: 'ring', text: t('park-replay.status.canaryParked', { count: String(result.parkedAgain), replayed: String(count) }) };
  if (result.state === 'cancelled') return { fill: 'yellow', shape: 'ring', text: t('park-replay.status.cancelled', { count: String(count), left }) };
  return { fill, shape: 'dot', text: t('park-replay.status.replayed', { count: String(count), left }) };
}

/**
 * A paced replay from a flow (msg.rate, msg.canary, msg.canaryWait): run as the configuration's job
 * (the sidebar shows it, a redeploy stops it), the node's status following its progress; resolves with
 * its end.
 */
async function pacedFromFlow(
  RED: NodeAPI,
  node: Node,
  config: RetryConfigNode,
  source: NodeMessage,
  options: { max: number; resetAttempts: boolean; by: string; redirect: ReplayDestination | undefined },
  t: Translate,
): Promise<Record<string, unknown>> {
  const busy = config.replayJobs.running();
  if (busy) throw new Error(`a paced replay already runs on this parking queue (job ${busy.id})`);
  const pace = pacedOptionsFrom(source, { max: options.max });
  const { id, run, selection } = await startPacedReplay(source, config, { pace, resetAttempts: options.resetAttempts, actor: { by: options.by, userId: node.id }, redirect: options.redirect });
  const queue = config.topology?.parkingQueue ?? '';
  const info = { id, queue, by: options.by, selection: describeSelection(selection), ...(options.redirect ? { redirect: options.redirect } : {}) };
  config.replayJobs.add(info, run);
  const details = { config: config.id, queue, job: id, filter: info.selection, rate: pace.rate, canary: pace.canary, canaryWaitSeconds: pace.canaryWaitMs / 1000, by: options.by, ...(options.redirect ? { redirect: options.redirect } : {}) };
  audit(RED, 'paced-replay', details);
  const timer = setInterval(() => {
    const now = run.status();
    node.status({ fill: 'blue', shape: 'dot', text: t('park-replay.status.paced', { count: String(now.replayed), state: now.state }) });
  }, 1000);
  try {
    await run.finished;
  } finally {
    clearInterval(timer);
  }
  const end = config.replayJobs.get(id) ?? { ...info, ...run.status() };
  audit(RED, 'paced-replay-end', { ...details, count: end.replayed, state: end.state, parkedAgain: end.parkedAgain, message: end.message });
  if (end.state === 'failed') throw new Error(`paced replay failed after ${end.replayed} replayed: ${end.message ?? ''}`);
  return { ...end, job: id, remaining: end.remaining ?? 0 };
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
      const by = `flow ${node.id}`;
      let redirect: ReplayDestination | undefined;
      try {
        redirect = action === 'replay' ? redirectFrom(msg.redirect) : undefined;
      } catch (err) {
        running = false;
        node.status({ fill: 'red', shape: 'ring', text: t('park-replay.status.failed', { action }) });
        done(err as Error);
        return;
      }
      const work =
        action === 'replay' && msg.rate !== undefined
          ? pacedFromFlow(RED, node, config, source, { max, resetAttempts, by, redirect }, t)
          : auditedParkingAction(RED, action, source, config, { max, resetAttempts, userId: node.id, by, redirect });
      work
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
  registerReplayJobEndpoints(RED, registerParkingEndpoints(RED));
  registerEditEndpoint(RED);
};
