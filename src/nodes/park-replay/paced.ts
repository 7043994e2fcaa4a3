/** A paced replay started by a park-replay msg. */
import { pacedOptionsFrom, type ReplayDestination } from '../../lib/parking';
import { audit } from '../shared/audit';
import type { Translate } from '../shared/i18n';
import type { Node, NodeAPI, NodeMessage } from '../shared/node-red';
import { describeSelection, startPacedReplay } from './queue-actions';
import type { RetryConfigNode } from '../shared/retry-config-node';

/**
 * A paced replay from a flow (msg.rate, msg.canary, msg.canaryWait): run as the configuration's job
 * (the sidebar shows it, a redeploy stops it), the node's status following its progress; resolves with
 * its end.
 */
export async function pacedFromFlow(
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
  const details = { config: config.id, queue, job: id, filter: info.selection, rate: pace.rate, canary: pace.canary, canaryWaitSeconds: pace.canaryWaitMs / 1000, by: options.by, redirect: options.redirect ?? null };
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
