/** observe — counting what the consumers did (Prometheus text, and minute by minute for the last 24 hours), and keeping per-message warnings from flooding the log. */
export {
  DURATION_BUCKETS_S,
  Histogram,
  QueueCounters,
  RetryMetrics,
  type BrokerGauges,
  type ConsumerRecorder,
  type OutcomeRecorder,
  type ConsumerGauges,
  type KindLabel,
  type Outcome,
  type OutcomeEvent,
  type OutboxGauges,
  type QueueDepths,
  type SettledOutcome,
} from './metrics';
export { COUNTED, HISTORY_MINUTES, MINUTE_MS, MinuteRing, type Clock, type Counted, type MinuteSeries } from './history';
export { RetryHistory, type ConsumerHistory, type HistoryFilter, type HistoryOwner } from './retry-history';
export { WideCounts } from './wide-counts';
export { LogLimiter } from './log-limiter';
export { messages } from './plural';
