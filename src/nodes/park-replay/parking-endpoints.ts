/**
 * The editor's parking browser (sidebar tab): admin endpoints that peek at a deployed retry config's
 * parking queue (never consuming), group it by folded park reason and list a group's messages a page
 * at a time, show one parked message whole, and replay or delete all, selected or one group's parked
 * messages. Each runs what the park-replay node runs (parking-actions.ts).
 */
import { randomUUID } from 'node:crypto';
import type { AdminRequest, AdminResponse, NodeAPI } from '../shared/node-red';
import { actorOf } from '../shared/audit';
import { auditedParkingAction, readParkedGroup, readParkedMessage, redirectFrom, WHOLE_QUEUE, type ParkAction } from './queue-actions';
import { selectionFrom } from '../../lib/parking';
import { findRetryConfig, type RetryConfigNode } from '../shared/retry-config-node';

export const PARKING_PATH = '/rabbitmq-retry/parking';
/** The most a browser lists at once; the total says how many wait. */
export const PEEK_LIMIT = 200;
/** A replay of everything moves at most this many at once. */
const REPLAY_LIMIT = 10_000;
/** The most of one body the browser is sent (a larger one is shown cut, saying so). */
export const BODY_LIMIT = 4 * 1024 * 1024;

export function answer(res: AdminResponse, work: () => Promise<{ status: number; body: unknown }>): void {
  work().then(
    (a) => res.status(a.status).json(a.body),
    (err: unknown) => res.status(502).json({ error: err instanceof Error ? err.message : String(err) }),
  );
}

function messageIds(body: unknown): string[] | undefined {
  const ids = (body as { messageIds?: unknown } | undefined)?.messageIds;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : undefined;
}

/**
 * What a replay / purge request selects: `messageIds`, else a `group` (its folded reason), else a
 * search's `filter` over its `window`, else everything.
 */
export function selectionOf(body: unknown): Record<string, unknown> {
  const ids = messageIds(body);
  if (ids) return { messageIds: ids };
  const { group, filter, window } = (body ?? {}) as { group?: unknown; filter?: unknown; window?: unknown };
  if (typeof group === 'string' && group !== '') return { group };
  return filter !== undefined && filter !== null ? { filter, window } : {};
}

const count = (value: unknown, fallback: number): number => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : fallback);

/** A deployed configuration with a usable topology and broker, or the answer saying why not. */
export type UsableConfig = (configId: string | undefined) => { config: RetryConfigNode; queue: string } | { status: number; body: unknown };

/** The deployed configuration with a usable topology and broker, or the answer saying why not. */
export function usableConfig(RED: NodeAPI, configId: string | undefined): ReturnType<UsableConfig> {
  const config = findRetryConfig(RED, configId);
  if (!config) return { status: 404, body: { error: 'this retry configuration is not deployed: deploy it first' } };
  if (!config.topology || !config.broker) return { status: 409, body: { error: config.problems.join('; ') || 'no broker' } };
  return { config, queue: config.topology.parkingQueue };
}

/** Registers the endpoints; returns how they find a usable configuration (the paced replay endpoints use it too). */
export function registerParkingEndpoints(RED: NodeAPI): UsableConfig {
  const usable: UsableConfig = (configId) => usableConfig(RED, configId);

  async function run(configId: string | undefined, action: ParkAction, source: Record<string, unknown>, max: number, req?: AdminRequest): Promise<{ status: number; body: unknown }> {
    const found = usable(configId);
    if (!('config' in found)) return found;
    let redirect;
    try {
      redirect = action === 'replay' ? redirectFrom((req?.body as { redirect?: unknown } | undefined)?.redirect) : undefined;
      selectionFrom(source);
    } catch (err) {
      return { status: 400, body: { error: (err as Error).message } };
    }
    const result = await auditedParkingAction(RED, action, source, found.config, { max, resetAttempts: true, userId: `parking-browser-${randomUUID()}`, by: actorOf(req), redirect }, req);
    return { status: 200, body: { queue: found.queue, ...result } };
  }

  RED.httpAdmin.get(`${PARKING_PATH}/:config`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, () => run(req.params.config, 'peek', {}, PEEK_LIMIT));
  });
  // One message with its whole body (up to BODY_LIMIT), by ?messageId= or else ?position= (of the last peek).
  RED.httpAdmin.get(`${PARKING_PATH}/:config/message`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, async () => {
      const found = usable(req.params.config);
      if (!('config' in found)) return found;
      const messageId = typeof req.query?.messageId === 'string' && req.query.messageId !== '' ? req.query.messageId : undefined;
      const position = typeof req.query?.position === 'string' && /^\d+$/.test(req.query.position) ? Number(req.query.position) : undefined;
      if (messageId === undefined && (position === undefined || position >= PEEK_LIMIT)) return { status: 400, body: { error: `give a messageId, or a position below ${PEEK_LIMIT}` } };
      const message = await readParkedMessage({ messageId, position }, found.config, { limit: PEEK_LIMIT, bodyBytes: BODY_LIMIT, userId: `parking-browser-${randomUUID()}` });
      if (!message) return { status: 404, body: { error: 'this message is no longer in the parking queue' } };
      return { status: 200, body: { queue: found.queue, message } };
    });
  });
  // The whole queue by folded park reason, largest group first (read as a peek reads, never consuming).
  RED.httpAdmin.get(`${PARKING_PATH}/:config/groups`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, () => run(req.params.config, 'groups', {}, PEEK_LIMIT));
  });
  // One group's messages, ?key= (the folded reason), a page of PEEK_LIMIT from ?offset=.
  RED.httpAdmin.get(`${PARKING_PATH}/:config/group`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, async () => {
      const found = usable(req.params.config);
      if (!('config' in found)) return found;
      const key = req.query?.key;
      if (typeof key !== 'string' || key === '') return { status: 400, body: { error: 'give the group key' } };
      const offset = count(req.query?.offset, 0);
      const limit = Math.min(count(req.query?.limit, PEEK_LIMIT), PEEK_LIMIT);
      const page = await readParkedGroup(key, found.config, { offset, limit, previewBytes: 1024, userId: `parking-browser-${randomUUID()}` });
      return { status: 200, body: { queue: found.queue, key, offset, ...page } };
    });
  });
  for (const action of ['replay', 'purge'] as const) {
    RED.httpAdmin.post(`${PARKING_PATH}/:config/${action}`, RED.auth.needsPermission('rabbitmq-retry.write'), (req: AdminRequest, res: AdminResponse) => {
      // Without messageIds or a group: everything (the browser confirms that first).
      // A group is moved whole, however large; else at most REPLAY_LIMIT at once.
      const selection = selectionOf(req.body);
      answer(res, () => run(req.params.config, action, selection, selection.group === undefined ? REPLAY_LIMIT : WHOLE_QUEUE, req));
    });
  }
  // A search: ?from= &to= (ISO), ?reason= (text, any case), ?messageId= (part of it), over ?window= messages from the head.
  RED.httpAdmin.get(`${PARKING_PATH}/:config/search`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    const q = req.query ?? {};
    const filter = { from: q.from, to: q.to, reason: q.reason, messageId: q.messageId };
    answer(res, async () => {
      try {
        selectionFrom({ filter });
      } catch (err) {
        return { status: 400, body: { error: (err as Error).message } };
      }
      return run(req.params.config, 'peek', { filter, window: q.window }, PEEK_LIMIT);
    });
  });
  return usable;
}
