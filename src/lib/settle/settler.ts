/**
 * Carries a settle decision out on the delivery's channel: ack, or dead-letter to the queue's dead-letter
 * exchange (batched per channel by its AckBatcher, below); or a confirmed, mandatory copy (a retry tier,
 * the parking queue) and only then the ack — never the other way round.
 */
import type { Channel, Message, Options } from 'amqplib';
import { TagSet } from '../collections';
import { PublishError } from '../publish';
import type { DeadLetterFrame } from '../topology';
import type { CopyDecision, Decision } from './decide';
import { SettleError, staleDelivery, type AckTarget, type SettleAction, type TrackedDelivery } from './settlement';

/** Publishes a copy and resolves once the broker confirmed it and did not return it. */
export interface CopyPublisher {
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void>;
}

/** The decisions carried out at once, without a confirm to wait for. */
export type ImmediateDecision = Extract<Decision, { kind: 'ack' | 'dead-letter' | 'broker-retry' }>;

export class Settler {
  constructor(private readonly publisher: CopyPublisher) {}

  /** Acks or dead-letters at once; throws a stale {@link SettleError} when the channel is gone. */
  execute(entry: TrackedDelivery, decision: ImmediateDecision, action: SettleAction): void {
    if (entry.acks.closed) throw staleDelivery(entry, action);
    try {
      if (decision.kind === 'ack') entry.acks.ack(entry.message);
      // A reject with requeue, one frame: only a reject counts in x-delivery-count on RabbitMQ 4.3, and the queue delays it.
      else if (decision.kind === 'broker-retry') entry.acks.reject(entry.message, true);
      // A failure without requeue (the channel's dead-letter frame): the queue's dead-letter exchange takes it to the retry queue.
      else entry.acks.reject(entry.message, false);
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
    try {
      await this.publisher.publish('', decision.queue, entry.message.content, decision.options);
    } catch (err) {
      // Lost with its channel while the delivery's own channel lives: the broker closed the consumers'
      // shared copy channel for another publish on it (a 404, a 406). Not this message's fault: once more
      // at once, on a new channel, rather than back to the queue (a forged x-death would come back at
      // attempt 1 instead of being parked at its first failure). A second failure is the caller's.
      if (!lostWithChannel(err) || entry.acks.closed) throw err;
      await this.publisher.publish('', decision.queue, entry.message.content, decision.options);
    }
    if (entry.acks.closed) {
      throw new SettleError(
        `message ${entry.id} was copied to '${decision.queue}', but its channel was lost before the ack: the broker redelivers it, so it may be handled twice`,
        'stale',
      );
    }
    this.execute(entry, { kind: 'ack' }, action);
  }
}

/** A publish that failed because its channel closed (PublishError's `channel-closed`), not because the broker refused or returned it. */
function lostWithChannel(err: unknown): boolean {
  return err instanceof PublishError && err.failure === 'channel-closed';
}

/** The part of an amqplib channel the batcher uses. */
export type AckChannel = Pick<Channel, 'ack' | 'nack' | 'reject' | 'nackAll'>;

/** Defers a flush to the end of the event-loop turn; injectable for unit tests. */
export type Scheduler = (flush: () => void) => void;

const endOfTurn: Scheduler = (flush) => {
  setImmediate(flush);
};

type Kind = 'ack' | 'dead-letter';

/**
 * The AckBatcher coalesces the acks and dead-letters of one consumer channel into multiple frames.
 *
 * Why: each `channel.ack` is one AMQP frame, and amqplib writes each frame with a socket write of its
 * own, which the broker then processes. With a prefetch of 100 a flow settles its msgs one Node-RED
 * hop apart, each in its own `setImmediate`, so the acks and dead-letters of one event-loop turn are
 * collected and written after it, ascending: below every delivery still unsettled, one frame with
 * `multiple` set per run of the same kind (an ack run, a dead-letter nack run, ...); above it, one plain
 * frame each. The runs go out in order, so when a multiple frame is written everything below it is
 * settled already: it never covers a settle of the other kind, nor a delivery this batcher has seen
 * arrive and not yet seen settled (deliveries are registered on arrival, before the flow can settle
 * them, so that holds for every delivery of the channel). Where the channel's dead-letter frame is
 * `reject` (a quorum main queue on RabbitMQ 4.3+, which counts a failure towards its delivery limit only
 * for a reject: `deadLetterFrame` in topology/broker-version.ts), a dead-letter is a `basic.reject` of
 * its own, one frame per message, written before any multiple-ack that covers its tag.
 *
 * When no other delivery is in flight (prefetch 1, or the last of a burst) they go out at once:
 * waiting would add a turn of latency and save nothing. Otherwise they are written at the end of the
 * turn; if the channel closes in between, the broker redelivers those messages (as it does for a
 * frame lost with its socket) — a dead-letter then happens on the redelivery. `flush()` before
 * closing the channel on purpose (a closing connection then waits two turns, so amqplib, which writes
 * on setImmediate, puts them on the socket first). A return to the queue (`reject` or `nack` with
 * requeue) is written at once; `handBack()` returns every unsettled delivery with one `nack`.
 */
export class AckBatcher implements AckTarget {
  /** Delivery tags that arrived and were not settled through this batcher yet. */
  private readonly unsettled = new TagSet();
  /**
   * Settled, not yet written, in the order they were settled (two parallel lists: no object per
   * settle). `inOrder` while each tag is above the one before, the usual case: no sort needed then.
   */
  private pendingMessages: Message[] = [];
  private pendingKinds: Kind[] = [];
  private inOrder = true;
  /** Whether every pending settle is an ack (the usual case: a run below every unsettled one is one frame). */
  private acksOnly = true;
  private scheduled = false;
  private gone = false;

  /** `deadLetters`: how a dead-letter goes out (see `deadLetterFrame`); a reject per message when not said. */
  constructor(
    readonly channel: AckChannel,
    private readonly schedule: Scheduler = endOfTurn,
    private readonly deadLetters: DeadLetterFrame = 'reject',
  ) {}

  /** The channel is gone (or was let go of): settles throw, the broker has the deliveries again. */
  get closed(): boolean {
    return this.gone;
  }

  /** A delivery arrived (call before the flow sees it). */
  arrived(message: Message): void {
    this.unsettled.add(message.fields.deliveryTag);
  }

  /** Acks at the end of this turn. Throws when the channel is known to be gone. */
  ack(message: Message): void {
    this.settle(message, 'ack');
  }

  /**
   * The message failed: without requeue (the dead-letter exchange takes it) a dead-letter at the end of
   * this turn, in the channel's dead-letter frame; with requeue a `basic.reject` at once, counted by every
   * RabbitMQ version (a quorum queue's `x-delivery-count`). Throws when the channel is known to be gone.
   */
  reject(message: Message, requeue: boolean): void {
    if (!requeue) return this.settle(message, 'dead-letter');
    this.returned(message);
    this.channel.reject(message, true);
  }

  /**
   * Hands the message back, not its fault: with requeue a `basic.nack` at once, which RabbitMQ 4.3+
   * does not count against a quorum queue's delivery limit. Without requeue a dead-letter, as
   * `reject(message, false)`. Throws when the channel is known to be gone.
   */
  nack(message: Message, requeue: boolean): void {
    if (!requeue) return this.settle(message, 'dead-letter');
    this.returned(message);
    this.channel.nack(message, false, true);
  }

  /**
   * Writes the pending settles, then hands every delivery still unsettled back to the queue with one
   * `basic.nack` (multiple, requeue): a stopping consumer's leftovers, which RabbitMQ 4.3+ then does not
   * count as failures (closing the channel with them unacked would). Call after the consumer's cancel
   * is confirmed (nothing more arrives). Says how many it handed back.
   */
  handBack(): number {
    this.flush();
    const count = this.unsettled.size;
    if (this.gone || count === 0) return 0;
    this.unsettled.clear();
    try {
      this.channel.nackAll(true);
    } catch {
      this.close(); // the channel closed under us: the broker has them again anyway
    }
    return count;
  }

  /**
   * Writes the pending settles: runs of one kind as multiple frames below every unsettled delivery,
   * plain frames above (a dead-letter in `reject` frames: one each, the ack runs around it go on). Says
   * whether it wrote any.
   */
  flush(): boolean {
    this.scheduled = false;
    const messages = this.pendingMessages;
    if (this.gone || messages.length === 0) return false;
    const kinds = this.pendingKinds;
    const order = this.inOrder ? undefined : ascending(messages);
    const acksOnly = this.acksOnly;
    this.pendingMessages = [];
    this.pendingKinds = [];
    this.inOrder = true;
    this.acksOnly = true;
    const lowestUnsettled = this.unsettled.lowest();
    try {
      // Acks in order, all below every unsettled delivery: one multiple ack of the highest, without a walk (a batch's items).
      const last = messages[messages.length - 1] as Message;
      if (acksOnly && !order && last.fields.deliveryTag < lowestUnsettled) {
        this.write(last, 'ack', true);
        return true;
      }
      // The run so far: its highest settle (the one a multiple frame names) and its kind.
      let run: Message | undefined;
      let runKind: Kind = 'ack';
      for (let k = 0; k < messages.length; k += 1) {
        const i = order ? (order[k] ?? k) : k;
        const message = messages[i];
        const kind = kinds[i];
        if (message === undefined || kind === undefined) continue;
        if (kind === 'dead-letter' && this.deadLetters === 'reject') {
          // One frame per message, before the multiple-ack that may cover its tag: a reject counts on every version.
          this.channel.reject(message, false);
        } else if (message.fields.deliveryTag > lowestUnsettled) {
          if (run) this.write(run, runKind, true);
          run = undefined;
          this.write(message, kind, false);
        } else {
          if (run && runKind !== kind) this.write(run, runKind, true);
          run = message; // the highest of the run so far
          runKind = kind;
        }
      }
      if (run) this.write(run, runKind, true);
      return true;
    } catch {
      // The channel closed under us: the broker redelivers what these frames would have settled.
      this.close();
      return false;
    }
  }

  /** The channel is gone: pending settles are dropped, later settles throw. */
  close(): void {
    this.gone = true;
    this.pendingMessages = [];
    this.pendingKinds = [];
    this.inOrder = true;
    this.acksOnly = true;
    this.unsettled.clear();
  }

  private settle(message: Message, kind: Kind): void {
    if (this.gone) throw new Error('Channel closed');
    const tag = message.fields.deliveryTag;
    this.unsettled.delete(tag);
    const messages = this.pendingMessages;
    const last = messages[messages.length - 1];
    if (last !== undefined && last.fields.deliveryTag > tag) this.inOrder = false;
    messages.push(message);
    this.pendingKinds.push(kind);
    if (kind !== 'ack') this.acksOnly = false;
    if (this.unsettled.size === 0) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
  }

  /** An ack, or a dead-letter nack (without requeue). */
  private write(message: Message, kind: Kind, multiple: boolean): void {
    if (kind === 'ack') this.channel.ack(message, multiple);
    else this.channel.nack(message, multiple, false);
  }

  /** A delivery goes back to its queue now (not batched). */
  private returned(message: Message): void {
    if (this.gone) throw new Error('Channel closed');
    this.unsettled.delete(message.fields.deliveryTag);
  }
}

/** The indexes of `messages` in ascending delivery-tag order. */
function ascending(messages: readonly Message[]): number[] {
  const tag = (i: number): number => messages[i]?.fields.deliveryTag ?? 0;
  return messages.map((_, i) => i).sort((a, b) => tag(a) - tag(b));
}
