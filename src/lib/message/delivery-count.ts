/**
 * Attempts under broker-native delayed retry (RabbitMQ 4.3+ quorum queues): the message never leaves
 * the main queue, so there is no `x-death`; the broker counts its failed deliveries (rejects, and
 * channels closed with it unacked) in `x-delivery-count`. Pure.
 */
import { attemptHeaderCount, type RetryInfo } from './attempts';

/** Header a quorum queue sets on a redelivery: the failed deliveries so far (on 4.3, rejects only). */
export const DELIVERY_COUNT_HEADER = 'x-delivery-count';

function countOf(value: unknown): number {
  const v = value !== null && typeof value === 'object' && 'value' in value ? value.value : value;
  const n = typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * `msg.retry` of a delivery from a main queue that delays its retries itself: the attempt is
 * `x-delivery-count` + 1 (or the package's own attempt header, kept by a replay, when larger).
 */
export function deliveryCountRetryInfo(headers: Record<string, unknown> | undefined | null, maxAttempts: number): RetryInfo {
  const attempt = Math.max(countOf(headers?.[DELIVERY_COUNT_HEADER]), attemptHeaderCount(headers)) + 1;
  return { attempt, maxAttempts, remaining: Math.max(0, maxAttempts - attempt), firstDeathReason: null, deaths: [] };
}
