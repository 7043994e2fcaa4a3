/** What settling a delivery means: the actions, the delivery as the settle path sees it, the outcome, and why a settle failed. */
import type { ConsumeMessage, Message } from 'amqplib';
import type { RetryInfo } from '../message';
import type { MessageSpan } from '../trace';

export type SettleAction = 'ack' | 'retry' | 'park';

/** Where a delivery is acked or nacked: its channel, through the channel's ack batcher. */
export interface AckTarget {
  /** The channel is gone (or going): nothing can be settled on it any more; the broker has its deliveries again. */
  readonly closed: boolean;
  ack(message: Message): void;
  /**
   * The message failed. `requeue` true: back to the queue with a `basic.reject`, one frame for this
   * message, which every RabbitMQ version counts (a quorum queue's `x-delivery-count`, towards its
   * delivery limit). False: the queue's dead-letter exchange takes it, in the channel's dead-letter
   * frame (a reject each where only a reject counts, else batched nacks: `deadLetterFrame`).
   */
  reject(message: Message, requeue: boolean): void;
  /**
   * Hands a message back that did not fail (rate limit, pause, stop): `basic.nack`, which RabbitMQ 4.3+
   * does not count against a quorum queue's delivery limit (3.10 and 4.0 count every return). `requeue`
   * false is a dead-letter, the same as `reject(message, false)`.
   */
  nack(message: Message, requeue: boolean): void;
}

/** A delivery waiting to be settled; it stays with its consumer, never on `msg` (Node-RED deep-clones msgs). */
export interface TrackedDelivery {
  id: string;
  /** Settles on the channel it came from. */
  acks: AckTarget;
  message: ConsumeMessage;
  retry: RetryInfo;
  /** When the consumer received it (ms since epoch): the age of a message without other clues. */
  receivedAt: number;
  /** When it is settled by the settle timeout (`performance.now()` time; Infinity without one). */
  deadline: number;
  /** The deduplication key it was claimed under, when the consumer deduplicates. */
  dedupeKey?: string;
  /** Its spans, when the consumer records them: processing, then the settle and the copy it made. */
  spans?: DeliverySpans;
}

/** The spans of one delivery (see consume/delivery-spans.ts). */
export interface DeliverySpans {
  process: MessageSpan;
  settle?: MessageSpan;
  /** The retry-tier or park copy's send. */
  copy?: MessageSpan;
  /** Batch mode: the span of the batch the delivery went out in, shared by its items; it ends with the last of them. */
  batch?: { span: MessageSpan; open: number };
}

export interface SettleOutcome {
  /**
   * What was done: a retry on the last attempt parks, so this can differ from the action asked;
   * `duplicate`: acked without entering the flow, its key processed before.
   */
  done: 'acked' | 'retried' | 'parked' | 'duplicate';
  attempt: number;
  parkReason?: string;
  /** The parking queue, when parked. */
  parkedTo?: string;
}

/**
 * Where a settle that is not done at once ends up: its outcome, or the error it failed with, and the
 * delivery's id (called once; it must not throw). A callback rather than a promise: none per settle on
 * the hot path; the id lets one callback serve every settle (no closure per settle either).
 */
export type SettleLater = (result: SettleOutcome | Error, deliveryId: string) => void;

export type SettleFailureKind = 'already-settled' | 'stale' | 'unknown' | 'broker';

export class SettleError extends Error {
  constructor(
    message: string,
    readonly kind: SettleFailureKind,
  ) {
    super(message);
    this.name = 'SettleError';
  }
}

/** How a settle that was asked for is remembered. */
export const PAST_TENSE: Readonly<Record<SettleAction, string>> = { ack: 'acked', retry: 'retried', park: 'parked' };

/** A delivery whose channel is gone: the broker has it again and redelivers it. */
export function staleDelivery(entry: Pick<TrackedDelivery, 'id' | 'retry'>, action: SettleAction): SettleError {
  return new SettleError(
    `message ${entry.id}: its channel was lost before this ${action}; the broker redelivers it (attempt ${entry.retry.attempt} will be repeated)`,
    'stale',
  );
}
