/**
 * What the park-replay node and its parking browser (admin endpoints) do with a configuration's parking
 * queue beyond the shared actions (`shared/parking-actions.ts`): an action with its audit log entry,
 * a paced replay, the edit and replay of one message, reading one message whole or a group's page.
 */
import { randomUUID } from 'node:crypto';
import {
  changedHeaders,
  checkEditedBody,
  countParkedAgain,
  describeFilter,
  findParked,
  MAX_SCAN,
  PacedReplay,
  peekGroup,
  replayEdited,
  replayParked,
  ReplayStopped,
  selectionFrom,
  type GroupPageResult,
  type PacedOptions,
  type ParkedEdit,
  type ParkedLocator,
  type ParkedMessage,
  type ParkedSelection,
  type ReplayDestination,
} from '../../lib/parking';
import { openTelemetryTracer } from '../../lib/trace';
import { audit } from '../shared/audit';
import type { AdminRequest, NodeAPI } from '../shared/node-red';
import { replayedEvent, runParkingAction, scanLimitOf, stampOf, WHOLE_QUEUE, withParkingQueue, type ParkingConfig } from '../shared/parking-actions';
import type { ParkAction } from '../shared/properties';

export { WHOLE_QUEUE } from '../shared/parking-actions';
export type { ParkAction };

/** The selection in a person's words, for the audit log and a job's line. */
export function describeSelection(selection: ParkedSelection): string {
  const parts: string[] = [];
  if (selection.messageIds) parts.push(`message ids ${selection.messageIds.join(', ')}`);
  if (selection.group !== undefined) parts.push(`group ${JSON.stringify(selection.group)}`);
  if (selection.reason !== undefined) parts.push(`reason ${JSON.stringify(selection.reason)}`);
  if (selection.routingKey !== undefined) parts.push(`routing key ${JSON.stringify(selection.routingKey)}`);
  if (selection.filter) parts.push(describeFilter(selection.filter));
  return parts.length > 0 ? parts.join('; ') : 'every message';
}

/** Where a replay goes instead of back: `redirect` ({exchange, routingKey}) of a msg or a request body, checked. */
export function redirectFrom(value: unknown): ReplayDestination | undefined {
  if (value === undefined || value === null) return undefined;
  const { exchange, routingKey } = value as { exchange?: unknown; routingKey?: unknown };
  if (typeof value !== 'object' || (exchange !== undefined && typeof exchange !== 'string') || typeof routingKey !== 'string') {
    throw new Error('redirect must be {exchange, routingKey}: the exchange (empty: the default exchange) and the routing key (there: the queue name)');
  }
  const destination = { exchange: (exchange ?? '').trim(), routingKey: routingKey.trim() };
  if (destination.exchange === '' && destination.routingKey === '') throw new Error('redirect needs an exchange or a routing key (the default exchange routes by queue name)');
  return destination;
}

/** Who acts, for the replayed copy's headers: `by` (the admin user, or `flow <node id>`). */
export interface Actor {
  by: string;
  userId: string;
}

/** How much of a body an edit reads to tell whether it changed (the audit log says so). */
const BODY_COMPARE_BYTES = 4 * 1024 * 1024;

/**
 * Runs an action as runParkingAction does; a replay or purge also goes to the audit log (`redirect`
 * for a replay elsewhere), with what it reached when it stopped part way (`count` and `error`).
 * `who`: the admin request (Node-RED adds its user), or `by` (`flow <node id>`).
 */
export async function auditedParkingAction(
  RED: Pick<NodeAPI, 'log'>,
  action: ParkAction,
  source: Record<string, unknown>,
  config: ParkingConfig & { id: string },
  options: { max: number; resetAttempts: boolean; userId: string; by: string; redirect?: ReplayDestination },
  req?: AdminRequest,
): Promise<Record<string, unknown>> {
  const audited = action === 'replay' || action === 'purge';
  const details = (): Record<string, unknown> => ({
    config: config.id,
    queue: config.topology?.parkingQueue,
    filter: describeSelection(selectionFrom(source)),
    ...(req ? {} : { by: options.by }),
    ...(options.redirect ? { redirect: options.redirect } : {}),
  });
  const event = options.redirect && action === 'replay' ? 'redirect' : action;
  try {
    const result = await runParkingAction(action, source, config, options);
    if (audited) audit(RED, event, { ...details(), count: Number(action === 'replay' ? result.replayed : result.purged), ...(result.replayId ? { replayId: result.replayId } : {}) }, req);
    return result;
  } catch (err) {
    if (audited && err instanceof ReplayStopped) audit(RED, event, { ...details(), count: err.replayed, error: err.message }, req);
    throw err;
  }
}

/**
 * Starts a paced replay (see lib/parking/paced.ts) of the selected parked messages; resolves once it
 * runs (the broker connected, the parking queue readable) with the run and its id, which is also the
 * `replay-id` every copy carries. The broker connection is held until the run ends.
 */
export function startPacedReplay(
  source: Record<string, unknown>,
  config: ParkingConfig,
  options: { pace: PacedOptions; resetAttempts: boolean; actor: Actor; redirect?: ReplayDestination },
): Promise<{ id: string; run: PacedReplay; selection: ParkedSelection }> {
  const selection = selectionFrom(source);
  const scanLimit = scanLimitOf(selection, source.window);
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    withParkingQueue(config, options.actor.userId, true, async (topology, broker) => {
      const stamp = stampOf(options.actor.by, id, options.redirect);
      const onReplayed = replayedEvent(config, topology.mainQueue);
      const run = new PacedReplay(
        {
          replay: (max, hooks) =>
            replayParked(broker.connection, topology, {
              max,
              resetAttempts: options.resetAttempts,
              selection,
              scanLimit,
              tracer: openTelemetryTracer(),
              stamp,
              before: hooks.before,
              onReplayed: (parked) => {
                onReplayed(parked);
                hooks.replayed();
              },
            }),
          parkedAgain: async () => (await countParkedAgain(broker.connection, topology.parkingQueue, id)).parkedAgain,
        },
        options.pace,
      );
      resolve({ id, run, selection });
      // A redeploy may close the broker before the configuration stops its runs: stop between two messages then too.
      const stop = (): void => void run.cancel('stopped as the broker connection closed (a redeploy?)');
      broker.connection.once('closing', stop);
      try {
        await run.finished;
      } finally {
        broker.connection.off('closing', stop);
      }
    }).catch(reject);
  });
}

/**
 * Edit and replay of one parked message: found by `messageId` (undefined when it is no longer
 * parked), its edited body checked against its content type (EditRefused), then replayed as the
 * edited copy (replayEdited). `changed`: the header names the edit changes, for the audit log.
 */
export async function editParked(
  config: ParkingConfig,
  messageId: string,
  edit: ParkedEdit,
  options: { user: string | undefined; copyId: string; replayId: string; userId: string },
): Promise<{ replayed: number; remaining: number; changed: string[]; bodyChanged: boolean } | undefined> {
  return withParkingQueue(config, options.userId, true, async (topology, broker) => {
    const parked = await findParked(broker.connection, topology.parkingQueue, { messageId }, { limit: MAX_SCAN, bodyBytes: BODY_COMPARE_BYTES });
    if (!parked) return undefined;
    checkEditedBody(edit.body, parked.contentType);
    const by = { user: options.user, at: new Date(), messageId: options.copyId, replayId: options.replayId };
    const result = await replayEdited(broker.connection, topology, { messageId, edit, by, resetAttempts: true, onReplayed: replayedEvent(config, topology.mainQueue), tracer: openTelemetryTracer() });
    if (result.replayed === 0) return undefined;
    const bodyChanged = parked.truncated || parked.previewEncoding !== 'utf8' || parked.preview !== edit.body;
    return { replayed: result.replayed, remaining: result.remaining, changed: changedHeaders(parked.headers, edit), bodyChanged };
  });
}

/** One parked message with its body (up to `bodyBytes`), left in place; undefined when it is no longer parked. */
export async function readParkedMessage(
  locator: ParkedLocator,
  config: ParkingConfig,
  options: { limit: number; bodyBytes: number; userId: string },
): Promise<ParkedMessage | undefined> {
  return withParkingQueue(config, options.userId, true, (topology, broker) => findParked(broker.connection, topology.parkingQueue, locator, options));
}

/** A page of one group's parked messages (previews), left in place. */
export async function readParkedGroup(
  key: string,
  config: ParkingConfig,
  options: { offset: number; limit: number; previewBytes: number; userId: string },
): Promise<GroupPageResult> {
  return withParkingQueue(config, options.userId, true, (topology, broker) => peekGroup(broker.connection, topology.parkingQueue, key, { ...options, scanLimit: WHOLE_QUEUE }));
}
