/**
 * Peek, purge and replay of a retry config's parking queue, as the park-replay node and the editor's
 * parking browser (admin endpoints) both run them; reading one parked message whole, for the browser;
 * and the browser's edit and replay of one message.
 */
import { randomUUID } from 'node:crypto';
import {
  changedHeaders,
  checkEditedBody,
  countParkedAgain,
  describeFilter,
  findParked,
  groupParked,
  MAX_SCAN,
  PacedReplay,
  peekGroup,
  peekHazard,
  peekParked,
  purgeParked,
  replayEdited,
  replayParked,
  ReplayStopped,
  searchParked,
  searchWindow,
  selectionFrom,
  type GroupPageResult,
  type PacedOptions,
  type ParkedEdit,
  type ParkedLocator,
  type ParkedMessage,
  type ParkedSelection,
  type ReplayDestination,
  type ReplayStamp,
} from '../../lib/parking';
import { openTelemetryTracer } from '../../lib/trace';
import { audit } from './audit';
import type { AdminRequest, NodeAPI } from './node-red';
import type { RetryTopologyConfig } from '../../lib/topology';
import type { RetryBrokerNode } from './broker-node';
import { metrics } from './metrics';
import type { ParkAction } from './properties';
import type { RetryConfigNode } from './retry-config-node';

export type { ParkAction };

/**
 * How far a grouping, or a purge / replay of a group or by reason, reads: the whole queue (as deep as
 * it was when the read started). Such a read holds per group counts, never the messages.
 */
export const WHOLE_QUEUE = Number.MAX_SAFE_INTEGER;

/**
 * A selection by group or reason means every such message, however deep in the queue; one by a
 * search's filter the messages of its window (`window`, as the search looked at them).
 */
function scanLimitOf(selection: ParkedSelection, window: unknown): number | undefined {
  if (selection.filter !== undefined) return searchWindow(window);
  return selection.group !== undefined || selection.reason !== undefined ? WHOLE_QUEUE : undefined;
}

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

type ParkingConfig = Pick<RetryConfigNode, 'id' | 'topology' | 'broker' | 'consumers'>;

/** Who acts, for the replayed copy's headers: `by` (the admin user, or `flow <node id>`). */
export interface Actor {
  by: string;
  userId: string;
}

/** How much of a body an edit reads to tell whether it changed (the audit log says so). */
const BODY_COMPARE_BYTES = 4 * 1024 * 1024;

/**
 * Runs `work` with the configuration's topology and connected broker. The broker connection is held
 * open only meanwhile: `userId` registers as its user. `returnsMessages`: the work reads messages and
 * returns them to the queue, which must not harm it (see peekHazard).
 */
async function withParkingQueue<T>(
  config: ParkingConfig,
  userId: string,
  returnsMessages: boolean,
  work: (topology: RetryTopologyConfig, broker: RetryBrokerNode) => Promise<T>,
): Promise<T> {
  const { topology, broker } = config;
  if (!topology || !broker) throw new Error('the retry configuration has no usable topology or broker');
  const user = { id: userId, status: () => undefined };
  broker.register(user);
  try {
    const model = await broker.connection.whenConnected();
    if (returnsMessages) {
      const hazard = peekHazard(topology.parkingQueue, topology.parkingQueueArguments, model.connection.serverProperties.version);
      if (hazard !== undefined) throw new Error(hazard);
    }
    return await work(topology, broker);
  } finally {
    await broker.deregister(user);
  }
}

/**
 * Runs one action on a configuration with its topology and broker; `source` holds the selection
 * (`messageIds`, `routingKey`, `reason`).
 */
export async function runParkingAction(
  action: ParkAction,
  source: Record<string, unknown>,
  config: ParkingConfig,
  options: { max: number; resetAttempts: boolean; userId: string; by?: string; redirect?: ReplayDestination },
): Promise<Record<string, unknown>> {
  const selection = selectionFrom(source);
  const scanLimit = scanLimitOf(selection, source.window);
  // A purge of everything returns nothing to the queue; all else may.
  return withParkingQueue(config, options.userId, action === 'peek' || Object.keys(selection).length > 0, async (topology, broker) => {
    const queue = topology.parkingQueue;
    if (action === 'peek' && selection.filter) return { ...(await searchParked(broker.connection, queue, selection.filter, { window: scanLimit ?? searchWindow(undefined), show: options.max, previewBytes: 1024 })) };
    if (action === 'peek') return { ...(await peekParked(broker.connection, queue, { limit: options.max })) };
    if (action === 'groups') return { ...(await groupParked(broker.connection, queue, { limit: WHOLE_QUEUE })) };
    if (action === 'purge') return { ...(await purgeParked(broker.connection, queue, { selection, scanLimit })) };
    const stamp = stampOf(options.by ?? options.userId, randomUUID(), options.redirect);
    const result = await replayParked(broker.connection, topology, { max: options.max, resetAttempts: options.resetAttempts, selection, scanLimit, onReplayed: replayedEvent(config, topology.mainQueue), tracer: openTelemetryTracer(), stamp });
    return { ...result, replayId: stamp.replayId, ...(options.redirect ? { redirect: options.redirect } : {}) };
  });
}

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

function stampOf(by: string, replayId: string, redirect: ReplayDestination | undefined): ReplayStamp {
  return { by, at: new Date().toISOString(), replayId, ...(redirect ? { redirect } : {}) };
}

/** Each replayed message is counted, and is an event on the configuration's consumers (unless it went elsewhere, the main queue's). */
function replayedEvent(config: ParkingConfig, mainQueue: string): (parked: ParkedMessage) => void {
  return (parked) => {
    metrics.replayed(mainQueue, config.id);
    config.consumers.replayed({ event: 'replayed', queue: mainQueue, attempt: parked.attempts, reason: parked.reason, messageId: parked.messageId, durationMs: null });
  };
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
