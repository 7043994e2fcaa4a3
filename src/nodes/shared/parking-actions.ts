/**
 * Peek, purge and replay of a retry config's parking queue, as the park-replay node and the editor's
 * parking browser (admin endpoints) both run them.
 */
import { peekParked, purgeParked } from '../../lib/parking/scan';
import { retryMetrics } from '../../lib/observe/metrics';
import { peekHazard, selectionFrom, type ParkedMessage } from '../../lib/parking/view';
import type { ParkAction } from './properties';
import { replayParked } from '../../lib/parking/replay';
import type { RetryTopologyConfig } from '../../lib/topology/plan';
import type { RetryBrokerNode } from './broker-node';

export type { ParkAction };

/**
 * Runs one action; `source` holds the selection (`messageIds`, `routingKey`, `reason`). The broker
 * connection is held open only while it runs: `userId` registers as its user meanwhile.
 */
export async function runParkingAction(
  action: ParkAction,
  source: Record<string, unknown>,
  broker: RetryBrokerNode,
  topology: RetryTopologyConfig,
  options: { max: number; resetAttempts: boolean; userId: string },
): Promise<Record<string, unknown>> {
  const user = { id: options.userId, status: () => undefined };
  broker.register(user);
  try {
    const selection = selectionFrom(source);
    const model = await broker.connection.whenConnected();
    // A purge of everything returns nothing to the queue; all else may, and must not harm it.
    if (action === 'peek' || Object.keys(selection).length > 0) {
      const hazard = peekHazard(topology.parkingQueue, topology.parkingQueueArguments, model.connection.serverProperties.version);
      if (hazard !== undefined) throw new Error(hazard);
    }
    const queue = topology.parkingQueue;
    if (action === 'peek') return { ...(await peekParked(broker.connection, queue, { limit: options.max })) };
    if (action === 'purge') return { ...(await purgeParked(broker.connection, queue, { selection })) };
    // Each replayed message is counted, and is an event on the consumers of its queue.
    const onReplayed = (parked: ParkedMessage): void =>
      retryMetrics.replayed({ queue: topology.mainQueue, attempt: parked.attempts, reason: parked.reason, messageId: parked.messageId });
    return { ...(await replayParked(broker.connection, topology, { max: options.max, resetAttempts: options.resetAttempts, selection, onReplayed })) };
  } finally {
    await broker.deregister(user);
  }
}
