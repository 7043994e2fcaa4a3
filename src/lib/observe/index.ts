/** observe — counting what the consumers did (Prometheus text), and keeping per-message warnings from flooding the log. */
export {
  DURATION_BUCKETS_S,
  Histogram,
  QueueCounters,
  RetryMetrics,
  type BrokerGauges,
  type ConsumerGauges,
  type KindLabel,
  type Outcome,
  type OutcomeEvent,
  type OutboxGauges,
  type QueueDepths,
  type SettledOutcome,
} from './metrics';
export { LogLimiter } from './log-limiter';
export { messages } from './plural';
