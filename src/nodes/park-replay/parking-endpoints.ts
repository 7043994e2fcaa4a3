/**
 * The editor's parking browser (sidebar tab): admin endpoints that peek at a deployed retry config's
 * parking queue (never consuming), and replay or delete all or selected parked messages. Each runs
 * what the park-replay node runs (parking-actions.ts).
 */
import { randomUUID } from 'node:crypto';
import type { AdminRequest, AdminResponse, NodeAPI } from '../shared/node-red';
import { runParkingAction, type ParkAction } from '../shared/parking-actions';
import { findRetryConfig } from '../shared/retry-config-node';

export const PARKING_PATH = '/rabbitmq-retry/parking';
/** The most a browser lists at once; the total says how many wait. */
export const PEEK_LIMIT = 200;
/** A replay of everything moves at most this many at once. */
const REPLAY_LIMIT = 10_000;

function answer(res: AdminResponse, work: () => Promise<{ status: number; body: unknown }>): void {
  work().then(
    (a) => res.status(a.status).json(a.body),
    (err: unknown) => res.status(502).json({ error: err instanceof Error ? err.message : String(err) }),
  );
}

function messageIds(body: unknown): string[] | undefined {
  const ids = (body as { messageIds?: unknown } | undefined)?.messageIds;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : undefined;
}

export function registerParkingEndpoints(RED: NodeAPI): void {
  async function run(configId: string | undefined, action: ParkAction, source: Record<string, unknown>, max: number): Promise<{ status: number; body: unknown }> {
    const config = findRetryConfig(RED, configId);
    if (!config) return { status: 404, body: { error: 'this retry configuration is not deployed: deploy it first' } };
    if (!config.topology || !config.broker) return { status: 409, body: { error: config.problems.join('; ') || 'no broker' } };
    const result = await runParkingAction(action, source, config, { max, resetAttempts: true, userId: `parking-browser-${randomUUID()}` });
    return { status: 200, body: { queue: config.topology.parkingQueue, ...result } };
  }

  RED.httpAdmin.get(`${PARKING_PATH}/:config`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, () => run(req.params.config, 'peek', {}, PEEK_LIMIT));
  });
  for (const action of ['replay', 'purge'] as const) {
    RED.httpAdmin.post(`${PARKING_PATH}/:config/${action}`, RED.auth.needsPermission('rabbitmq-retry.write'), (req: AdminRequest, res: AdminResponse) => {
      // Without messageIds: everything (the browser confirms that first).
      const ids = messageIds(req.body);
      answer(res, () => run(req.params.config, action, ids ? { messageIds: ids } : {}, REPLAY_LIMIT));
    });
  }
}
