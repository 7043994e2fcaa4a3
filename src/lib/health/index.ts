/**
 * health — whether the package's parts work, for liveness and readiness probes: the report (pure) of
 * every broker connection, consumer, deduplication store, database and outbox relay, built from the
 * plain states their owners know, and whether the whole is ready.
 */
export { brokerReport, consumerReport, databaseReport, healthReport, keepsFromReady, relayReport, storeReport } from './report';
export type {
  BrokerInput,
  BrokerReport,
  ConsumerInput,
  ConsumerReport,
  DatabaseInput,
  DatabaseReport,
  HealthInput,
  HealthReport,
  PartStatus,
  RelayInput,
  RelayReport,
  StoreInput,
  StoreReport,
} from './types';
