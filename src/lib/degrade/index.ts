/**
 * degrade — protecting what a flow calls: the kill switch (a circuit breaker over a sliding window of
 * settles) and the rate limit (a token bucket), pure, with an injected clock.
 */
export { Circuit, WINDOW_BUCKETS, type CircuitChange, type CircuitSettings, type CircuitState } from './circuit';
export { burstOf, TokenBucket } from './token-bucket';
