/**
 * outbox — the transactional outbox: a flow's statements and its event written in one PostgreSQL
 * transaction, and the relay that publishes pending events with confirms and marks them sent.
 */
export { backoffMs, batchOutcome, claimOpening, claimSql, decodeClaimed, markSentSql, type BatchOutcome, type Row, type RowFailure } from './batch';
export { OutboxRelay, type RelayCounts, type RelayEvents, type RelayOptions, type RelayStats } from './relay';
export { RowPublisher, type EventPublisher } from './row-publisher';
export { OUTBOX_COLUMNS, OUTBOX_INDEXES, outboxChannel, outboxTableDdl, type OutboxStatus } from './schema';
export { BatchWindow, type WindowSlot } from './window';
export { StatementError, statementsProblem, writeOutbox, type OutboxEvent, type OutboxStatement, type StatementResult, type Transactional } from './write';
