/**
 * Peek, purge and replay of a retry config's parking queue, as the park-replay node and the editor's
 * parking browser (admin endpoints) both run them.
 */
import { peekHazard, peekParked, purgeParked, replayParked, selectionFrom, type ParkedMessage } from '../../lib/parking';
import { metrics } from './metrics';
import type { ParkAction } from './properties';
import type { RetryConfigNode } from './retry-config-node';

export type { ParkAction };

/**
 * Runs one action on a configuration with its topology and broker; `source` holds the selection
 * (`messageIds`, `routingKey`, `reason`). The broker connection is held open only while it runs:
 * `userId` registers as its user meanwhile.
 */
export async function runParkingAction(
  action: ParkAction,
  source: Record<string, unknown>,
  config: Pick<RetryConfigNode, 'topology' | 'broker' | 'consumers'>,
  options: { max: number; resetAttempts: boolean; userId: string },
): Promise<Record<string, unknown>> {
  const { topology, broker } = config;
  if (!topology || !broker) throw new Error('the retry configuration has no usable topology or broker');
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
    // Each replayed message is counted, and is an event on the configuration's consumers.
    const onReplayed = (parked: ParkedMessage): void => {
      metrics.replayed(topology.mainQueue);
      config.consumers.replayed({ event: 'replayed', queue: topology.mainQueue, attempt: parked.attempts, reason: parked.reason, messageId: parked.messageId, durationMs: null });
    };
    return { ...(await replayParked(broker.connection, topology, { max: options.max, resetAttempts: options.resetAttempts, selection, onReplayed })) };
  } finally {
    await broker.deregister(user);
  }
}
