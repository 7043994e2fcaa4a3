/**
 * outbox — the transactional outbox: a flow's statements and its event written in one PostgreSQL
 * transaction, and the relay that publishes pending events with confirms and marks them sent.
 */
export { backoffMs, OutboxRelay, type EventPublisher, type RelayCounts, type RelayEvents, type RelayOptions, type RelayStats } from './relay';
export { OUTBOX_COLUMNS, OUTBOX_INDEXES, outboxChannel, outboxTableDdl, type OutboxStatus } from './schema';
export { StatementError, statementsProblem, writeOutbox, type OutboxEvent, type OutboxStatement, type StatementResult, type Transactional } from './write';
