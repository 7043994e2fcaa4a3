/**
 * Peek, purge, replay and grouping of a retry config's parking queue, as the park-replay node (and its
 * parking browser's admin endpoints) and the retry-console run them, with the configuration's broker
 * held only meanwhile. What only park-replay does with the queue (audited actions, paced replays, edit
 * and replay of one message, reading one message or a group's page) is in its folder: queue-actions.ts.
 */
import { randomUUID } from 'node:crypto';
import {
  groupParked,
  peekHazard,
  peekParked,
  purgeParked,
  replayParked,
  searchParked,
  searchWindow,
  selectionFrom,
  type ParkedMessage,
  type ParkedSelection,
  type ReplayDestination,
  type ReplayStamp,
} from '../../lib/parking';
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

/**
 * A selection by group or reason means every such message, however deep in the queue; one by a
 * search's filter the messages of its window (`window`, as the search looked at them).
 */
export function scanLimitOf(selection: ParkedSelection, window: unknown): number | undefined {
  if (selection.filter !== undefined) return searchWindow(window);
  return selection.group !== undefined || selection.reason !== undefined ? WHOLE_QUEUE : undefined;
}

export type ParkingConfig = Pick<RetryConfigNode, 'id' | 'topology' | 'broker' | 'consumers'>;

/**
 * Runs `work` with the configuration's topology and connected broker. The broker connection is held
 * open only meanwhile: `userId` registers as its user. `returnsMessages`: the work reads messages and
 * returns them to the queue, which must not harm it (see peekHazard).
 */
export async function withParkingQueue<T>(
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

export function stampOf(by: string, replayId: string, redirect: ReplayDestination | undefined): ReplayStamp {
  return { by, at: new Date().toISOString(), replayId, ...(redirect ? { redirect } : {}) };
}

/** Each replayed message is counted, and is an event on the configuration's consumers (unless it went elsewhere, the main queue's). */
export function replayedEvent(config: ParkingConfig, mainQueue: string): (parked: ParkedMessage) => void {
  return (parked) => {
    metrics.replayed(mainQueue, config.id);
    config.consumers.replayed({ event: 'replayed', queue: mainQueue, attempt: parked.attempts, reason: parked.reason, messageId: parked.messageId, durationMs: null });
  };
}
