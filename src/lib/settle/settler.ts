/**
 * Carries a settle decision out on the delivery's channel: ack; reject to the dead-letter exchange;
 * a confirmed, mandatory copy and only then the ack (never the other way round), the original going
 * back to its queue after a pause when the copy fails; or ordered mode's hold.
 */
import type { Options } from 'amqplib';
import type { BrokerConnection } from '../connection/broker-connection';
import type { CopyDecision, Decision } from './decide';
import type { OrderedHold } from './ordered-hold';
import { SettleError, type SettleAction, type TrackedDelivery } from './settlement';

export interface SettlerOptions {
  connection: BrokerConnection;
  mainQueue: string;
  /** Pause before a delivery whose copy failed goes back to the queue. */
  requeuePauseMs: number;
  /** Whether the delivery's channel is still the consumer's live channel. */
  usable: (entry: TrackedDelivery) => boolean;
  /** Ordered mode only. */
  hold: OrderedHold | undefined;
}

export class Settler {
  constructor(private readonly options: SettlerOptions) {}

  /** Carries out a decision that needs no confirm (ack, dead-letter, hold) at once; throws a stale SettleError. */
  execute(entry: TrackedDelivery, decision: Exclude<Decision, CopyDecision>, action: SettleAction): void {
    if (!this.options.usable(entry)) throw this.stale(entry, action);
    switch (decision.kind) {
      case 'ack':
        this.ack(entry, action);
        this.options.hold?.release();
        return;
      case 'dead-letter':
        // requeue=false: the queue's dead-letter exchange takes it to the retry queue.
        try {
          entry.acks.nack(entry.message, false);
        } catch {
          throw this.stale(entry, action);
        }
        return;
      case 'hold':
        this.options.hold?.hold(entry, decision.reason);
        return;
    }
  }

  /** A retry by republishing to a tier, or a park: the confirmed copy, then the ack. */
  async copy(entry: TrackedDelivery, decision: CopyDecision, action: SettleAction): Promise<void> {
    if (!this.options.usable(entry)) throw this.stale(entry, action);
    const parking = decision.kind === 'park';
    await this.publishThenAck(entry, decision.queue, decision.options, action, parking ? 'park' : 'send to retry');
    if (parking) this.options.hold?.release();
  }

  /** amqplib throws when the channel closed under us: that is a stale delivery, not a crash. */
  private ack(entry: TrackedDelivery, action: SettleAction): void {
    try {
      entry.acks.ack(entry.message);
    } catch {
      throw this.stale(entry, action);
    }
  }

  private stale(entry: TrackedDelivery, action: SettleAction): SettleError {
    return new SettleError(
      `message ${entry.id}: its channel was lost before this ${action}; the broker redelivers it (attempt ${entry.retry.attempt} will be repeated)`,
      'stale',
    );
  }

  /**
   * Publishes a copy (confirmed, mandatory) and only then acks the original: at least once, never
   * lost. When the publish fails the original goes back to its queue after a pause.
   */
  private async publishThenAck(entry: TrackedDelivery, queue: string, options: Options.Publish, action: SettleAction, what: string): Promise<void> {
    const { message } = entry;
    try {
      await this.options.connection.publisher('settle').publish('', queue, message.content, options);
    } catch (err) {
      this.requeueLater(entry);
      throw new SettleError(
        `could not ${what} message ${entry.id} in '${queue}': ${(err as Error).message}; it goes back to '${this.options.mainQueue}' after a pause`,
        'broker',
      );
    }
    // Only now, with the copy confirmed, may the original go.
    if (!this.options.usable(entry)) {
      throw new SettleError(
        `message ${entry.id} was copied to '${queue}', but its channel was lost before the ack: the broker redelivers it, so it may be handled twice`,
        'stale',
      );
    }
    this.ack(entry, action);
  }

  /** After a failed publish: hand the message back to the queue after a pause (no hot loop, nothing dropped). */
  private requeueLater(entry: TrackedDelivery): void {
    const timer = setTimeout(() => {
      if (!this.options.usable(entry)) return;
      try {
        entry.acks.nack(entry.message, true);
      } catch {
        // Channel gone: the broker requeues it by itself.
      }
    }, this.options.requeuePauseMs);
    timer.unref?.();
  }
}
