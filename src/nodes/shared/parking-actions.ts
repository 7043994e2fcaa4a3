/**
 * Peek, purge and replay of a retry config's parking queue, as the park-replay node and the editor's
 * parking browser (admin endpoints) both run them; reading one parked message whole, for the browser;
 * and the browser's edit and replay of one message.
 */
import { changedHeaders, checkEditedBody, findParked, groupParked, MAX_SCAN, peekGroup, peekHazard, peekParked, purgeParked, replayEdited, replayParked, selectionFrom, type ParkedEdit, type ParkedLocator, type ParkedMessage, type ParkedSelection } from '../../lib/parking';
import { openTelemetryTracer } from '../../lib/trace';
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

/** A selection by group or reason means every such message, however deep in the queue. */
const scanLimitOf = (selection: ParkedSelection): number | undefined => (selection.group !== undefined || selection.reason !== undefined ? WHOLE_QUEUE : undefined);

/** How much of a body an edit reads to tell whether it changed (the audit log says so). */
const BODY_COMPARE_BYTES = 4 * 1024 * 1024;

type ParkingConfig = Pick<RetryConfigNode, 'topology' | 'broker' | 'consumers'>;

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
  options: { max: number; resetAttempts: boolean; userId: string },
): Promise<Record<string, unknown>> {
  const selection = selectionFrom(source);
  // A purge of everything returns nothing to the queue; all else may.
  return withParkingQueue(config, options.userId, action === 'peek' || Object.keys(selection).length > 0, async (topology, broker) => {
    const queue = topology.parkingQueue;
    if (action === 'peek') return { ...(await peekParked(broker.connection, queue, { limit: options.max })) };
    if (action === 'groups') return { ...(await groupParked(broker.connection, queue, { limit: WHOLE_QUEUE })) };
    const scanLimit = scanLimitOf(selection);
    if (action === 'purge') return { ...(await purgeParked(broker.connection, queue, { selection, scanLimit })) };
    const onReplayed = replayCounter(config, topology);
    return { ...(await replayParked(broker.connection, topology, { max: options.max, resetAttempts: options.resetAttempts, selection, scanLimit, onReplayed, tracer: openTelemetryTracer() })) };
  });
}

/** Each replayed message is counted, and is an event on the configuration's consumers. */
function replayCounter(config: ParkingConfig, topology: RetryTopologyConfig): (parked: ParkedMessage) => void {
  return (parked) => {
    metrics.replayed(topology.mainQueue);
    config.consumers.replayed({ event: 'replayed', queue: topology.mainQueue, attempt: parked.attempts, reason: parked.reason, messageId: parked.messageId, durationMs: null });
  };
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
  options: { user: string | undefined; copyId: string; userId: string },
): Promise<{ replayed: number; remaining: number; changed: string[]; bodyChanged: boolean } | undefined> {
  return withParkingQueue(config, options.userId, true, async (topology, broker) => {
    const parked = await findParked(broker.connection, topology.parkingQueue, { messageId }, { limit: MAX_SCAN, bodyBytes: BODY_COMPARE_BYTES });
    if (!parked) return undefined;
    checkEditedBody(edit.body, parked.contentType);
    const by = { user: options.user, at: new Date(), messageId: options.copyId };
    const result = await replayEdited(broker.connection, topology, { messageId, edit, by, resetAttempts: true, onReplayed: replayCounter(config, topology), tracer: openTelemetryTracer() });
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
): Promise<{ messages: ParkedMessage[]; more: boolean; total: number }> {
  return withParkingQueue(config, options.userId, true, (topology, broker) => peekGroup(broker.connection, topology.parkingQueue, key, { ...options, scanLimit: WHOLE_QUEUE }));
}
