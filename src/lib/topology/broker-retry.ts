/**
 * Broker-native delayed retry (RabbitMQ 4.3+ quorum queues): a message the consumer rejects with
 * requeue waits in the main queue itself, `x-delayed-retry-min × x-delivery-count` ms capped at
 * `x-delayed-retry-max` (measured on 4.3.6: 1 s, 2 s, 3 s, ... for min 1 s), then comes back. No
 * retry queue, no retry exchange, no TTL dead-letter hop. Pure.
 */
import { DEAD_LETTER_EXCHANGE, DEAD_LETTER_ROUTING_KEY, type QueueArguments } from './arguments';

export const QUEUE_TYPE = 'x-queue-type';
export const DELIVERY_LIMIT = 'x-delivery-limit';
export const DELAYED_RETRY_TYPE = 'x-delayed-retry-type';
export const DELAYED_RETRY_MIN = 'x-delayed-retry-min';
export const DELAYED_RETRY_MAX = 'x-delayed-retry-max';

/**
 * `failed`: only a reject (`basic.reject`, or a channel closed with the message unacked) delays the
 * message — what counts in `x-delivery-count` on 4.3. A nack with requeue (a rate limit's hand-back,
 * a pause) comes back at once and spends no attempt. (The broker also takes `returned`, `all`, `disabled`.)
 */
export const DELAYED_RETRY_FAILED = 'failed';


/** How a configuration's retries wait: in retry queues (every version), or in the main queue by the broker (4.3+). */
export type DelayedRetry = 'queues' | 'broker';
export const DELAYED_RETRY_CHOICES: readonly DelayedRetry[] = ['queues', 'broker'];

/** The wait the broker gives the n-th failed attempt (1-based): min × n, never above max. */
export function brokerRetryDelay(delays: { minMs: number; maxMs: number }, failedAttempt: number): number {
  return Math.min(delays.minMs * Math.max(failedAttempt, 1), delays.maxMs);
}

/** The broker's min and max from the configured delays: the first is the minimum, the largest the maximum. */
export function brokerRetryBounds(retryDelaysMs: readonly number[]): { minMs: number; maxMs: number } {
  const minMs = retryDelaysMs[0] ?? 0;
  return { minMs, maxMs: Math.max(minMs, ...retryDelaysMs) };
}

/**
 * The main queue's arguments for broker-native retry: quorum, delayed retry of failed deliveries,
 * the delivery limit at max attempts (the package parks the last attempt itself; the limit is the
 * broker's own guard), and what the broker dead-letters (at that limit) goes to the parking queue.
 */
export function brokerRetryArguments(config: { retryDelaysMs: readonly number[]; maxAttempts: number; parkingQueue: string }): QueueArguments {
  const { minMs, maxMs } = brokerRetryBounds(config.retryDelaysMs);
  return {
    [QUEUE_TYPE]: 'quorum',
    [DELAYED_RETRY_TYPE]: DELAYED_RETRY_FAILED,
    [DELAYED_RETRY_MIN]: minMs,
    [DELAYED_RETRY_MAX]: maxMs,
    [DELIVERY_LIMIT]: config.maxAttempts,
    [DEAD_LETTER_EXCHANGE]: '',
    [DEAD_LETTER_ROUTING_KEY]: config.parkingQueue,
  };
}
