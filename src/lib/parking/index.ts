/**
 * parking — the parking queue, where hopeless messages wait for a human: reading it without consuming
 * (peek), purging and replaying all or selected messages, and watching its depth.
 */
export { DEFAULT_PREVIEW_BYTES, findParked, MAX_SCAN, peekParked, purgeParked, scanQueue, type ParkedLocator, type PeekResult, type PurgeResult, type ScanResult, type ScanVerdict } from './scan';
export { describeParked, isEmptySelection, matchesSelection, peekHazard, plainValue, selectionFrom, type ParkedMessage, type ParkedSelection } from './view';
export { REPLAY_HEADER, replayParked, replayPublishOptions, replayTarget, type ReplayResult } from './replay';
export { QueueWatch, queueDepths, type QueueChecker, type WatchedQueues } from './watch';
