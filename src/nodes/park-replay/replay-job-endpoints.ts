/**
 * Paced replays from the editor's parking browser (or any admin API client): start one (answered with
 * its job id at once), look at its progress, cancel it. The jobs are the retry configuration's
 * (`RetryConfigNode.replayJobs`); every start and cancel goes to the audit log.
 */
import { randomUUID } from 'node:crypto';
import { pacedOptionsFrom } from '../../lib/parking';
import { actorOf, audit, requestOrigin } from '../shared/audit';
import type { AdminRequest, AdminResponse, NodeAPI } from '../shared/node-red';
import { describeSelection, redirectFrom, startPacedReplay, WHOLE_QUEUE } from './queue-actions';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { PARKING_PATH, selectionOf, type UsableConfig } from './parking-endpoints';

function answer(res: AdminResponse, work: () => Promise<{ status: number; body: unknown }>): void {
  work().then(
    (a) => res.status(a.status).json(a.body),
    (err: unknown) => res.status(502).json({ error: err instanceof Error ? err.message : String(err) }),
  );
}

/** Starts a paced replay for an admin request: `{messageIds | group | filter, redirect?, rate, canary, canaryWait, max?}`. */
async function startJob(RED: NodeAPI, found: { config: RetryConfigNode; queue: string }, configId: string | undefined, req: AdminRequest): Promise<{ status: number; body: unknown }> {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const busy = found.config.replayJobs.running();
  if (busy) return { status: 409, body: { error: `a paced replay already runs on this parking queue (job ${busy.id}): cancel it or wait for it`, job: busy } };
  const source = selectionOf(body);
  let pace;
  let redirect;
  try {
    pace = pacedOptionsFrom(body, { max: WHOLE_QUEUE });
    redirect = redirectFrom(body.redirect);
  } catch (err) {
    return { status: 400, body: { error: (err as Error).message } };
  }
  const by = actorOf(req);
  const { id, run, selection } = await startPacedReplay(source, found.config, { pace, resetAttempts: true, actor: { by, userId: `paced-replay-${randomUUID()}` }, redirect });
  const info = { id, queue: found.queue, by, selection: describeSelection(selection), ...(redirect ? { redirect } : {}) };
  found.config.replayJobs.add(info, run);
  const details = { config: configId, queue: found.queue, job: id, filter: info.selection, rate: pace.rate, canary: pace.canary, canaryWaitSeconds: pace.canaryWaitMs / 1000, redirect: redirect ?? null };
  audit(RED, 'paced-replay', details, req);
  // The end goes to the audit log too, with the count: by the user who started it, from where (the request is answered by then).
  const origin = requestOrigin(req);
  void run.finished.then(() => {
    const end = run.status();
    audit(RED, 'paced-replay-end', { ...details, by, count: end.replayed, state: end.state, parkedAgain: end.parkedAgain, message: end.message }, origin);
  });
  return { status: 202, body: { job: id, ...found.config.replayJobs.get(id) } };
}

export function registerReplayJobEndpoints(RED: NodeAPI, usable: UsableConfig): void {
  RED.httpAdmin.post(`${PARKING_PATH}/:config/paced`, RED.auth.needsPermission('rabbitmq-retry.write'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, async () => {
      const found = usable(req.params.config);
      return 'config' in found ? startJob(RED, found, req.params.config, req) : found;
    });
  });
  RED.httpAdmin.get(`${PARKING_PATH}/:config/jobs`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, () => {
      const found = usable(req.params.config);
      return Promise.resolve('config' in found ? { status: 200, body: { queue: found.queue, jobs: found.config.replayJobs.list() } } : found);
    });
  });
  RED.httpAdmin.get(`${PARKING_PATH}/:config/jobs/:job`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, () => {
      const found = usable(req.params.config);
      if (!('config' in found)) return Promise.resolve(found);
      const job = found.config.replayJobs.get(req.params.job ?? '');
      return Promise.resolve(job ? { status: 200, body: job } : { status: 404, body: { error: 'no such paced replay (finished ones are kept for a while, then forgotten)' } });
    });
  });
  RED.httpAdmin.post(`${PARKING_PATH}/:config/jobs/:job/cancel`, RED.auth.needsPermission('rabbitmq-retry.write'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, async () => {
      const found = usable(req.params.config);
      if (!('config' in found)) return found;
      const job = await found.config.replayJobs.cancel(req.params.job ?? '');
      if (!job) return { status: 404, body: { error: 'no such paced replay' } };
      audit(RED, 'paced-replay-cancel', { config: req.params.config, queue: found.queue, job: job.id, count: job.replayed, filter: job.selection }, req);
      return { status: 200, body: job };
    });
  });
}
