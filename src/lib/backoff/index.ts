/**
 * backoff — capped exponential delays (pure): the reconnect's (with jitter), the kill switch's
 * restart, the outbox's retries, the consumer's setup re-checks.
 */
export { backoffDelay, cappedDelay, type BackoffOptions } from './backoff';
