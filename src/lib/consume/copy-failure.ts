/**
 * A copy (park, retry tier) that failed: the delivery is not settled, it goes back to its queue after
 * a pause (no hot loop, nothing dropped), and the error says so.
 */
import { SettleError, type CopyDecision, type TrackedDelivery } from '../settle';
import type { DeliveryRegistry } from './registry';

/**
 * Ends the delivery's registration, rejects it back to the queue after `requeuePauseMs` (a failure of
 * this message: `basic.reject`, counted towards a quorum queue's delivery limit on every RabbitMQ
 * version, so a copy that never succeeds ends at the limit instead of looping), and returns the error to throw.
 */
export function requeueAfterPause(
  entry: TrackedDelivery,
  decision: CopyDecision,
  err: unknown,
  registry: DeliveryRegistry<TrackedDelivery>,
  { mainQueue, requeuePauseMs }: { mainQueue: string; requeuePauseMs: number },
): SettleError {
  const what = decision.kind === 'park' ? 'park' : 'send to retry';
  registry.end(entry.id, `${decision.kind === 'park' ? 'parking' : 'sending it to retry'} failed, so it goes back to '${mainQueue}' after a pause`, true);
  const timer = setTimeout(() => {
    if (entry.acks.closed) return; // the broker has it again already
    try {
      entry.acks.reject(entry.message, true);
    } catch {
      // Channel gone meanwhile: the broker requeues it by itself.
    }
  }, requeuePauseMs);
  timer.unref?.();
  return new SettleError(
    `could not ${what} message ${entry.id} in '${decision.queue}': ${err instanceof Error ? err.message : String(err)}; it goes back to '${mainQueue}' after a pause`,
    'broker',
  );
}
