/**
 * Carries a settle decision out on the delivery's channel: ack, or reject to the dead-letter exchange
 * (both batched by the channel's ack batcher); or a confirmed, mandatory copy (a retry tier, the parking
 * queue) and only then the ack — never the other way round.
 */
import type { Options } from 'amqplib';
import type { CopyDecision, Decision } from './decide';
import { SettleError, staleDelivery, type SettleAction, type TrackedDelivery } from './settlement';

/** Publishes a copy and resolves once the broker confirmed it and did not return it. */
export interface CopyPublisher {
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void>;
}

/** The decisions carried out at once, without a confirm to wait for. */
export type ImmediateDecision = Extract<Decision, { kind: 'ack' | 'dead-letter' }>;

export class Settler {
  constructor(private readonly publisher: CopyPublisher) {}

  /** Acks or dead-letters at once; throws a stale {@link SettleError} when the channel is gone. */
  execute(entry: TrackedDelivery, decision: ImmediateDecision, action: SettleAction): void {
    if (entry.acks.closed) throw staleDelivery(entry, action);
    try {
      if (decision.kind === 'ack') entry.acks.ack(entry.message);
      // requeue=false: the queue's dead-letter exchange takes it to the retry queue.
      else entry.acks.nack(entry.message, false);
    } catch {
      // amqplib throws when the channel closed under us: a stale delivery, not a crash.
      throw staleDelivery(entry, action);
    }
  }

  /**
   * Publishes the copy (confirmed, mandatory) and only then acks the original: at least once, never
   * lost. Rejects with the publish's error when the copy failed (nothing was acked: the caller decides
   * what becomes of the original), or with a stale {@link SettleError} when the copy is in but the
   * channel went before the ack (the broker redelivers the original: it may be handled twice).
   */
  async copy(entry: TrackedDelivery, decision: CopyDecision, action: SettleAction): Promise<void> {
    if (entry.acks.closed) throw staleDelivery(entry, action);
    await this.publisher.publish('', decision.queue, entry.message.content, decision.options);
    if (entry.acks.closed) {
      throw new SettleError(
        `message ${entry.id} was copied to '${decision.queue}', but its channel was lost before the ack: the broker redelivers it, so it may be handled twice`,
        'stale',
      );
    }
    this.execute(entry, { kind: 'ack' }, action);
  }
}
