/**
 * parking — the parking queue, where hopeless messages wait for a human: reading it without consuming
 * (peek), grouping it by folded park reason, purging and replaying all or selected messages, editing
 * one before replaying it, and watching its depth.
 */
export { DEFAULT_PREVIEW_BYTES, findParked, MAX_SCAN, peekParked, purgeParked, scanQueue, type ParkedLocator, type PeekResult, type PurgeResult, type ScanResult, type ScanVerdict } from './scan';
export { describeParked, isEmptySelection, matchesSelection, parkedSummary, peekHazard, plainValue, replayCount, selectionFrom, type ParkedMessage, type ParkedSelection } from './view';
export { REPLAY_HEADER, REPLAY_STAMP_HEADERS, replayEdited, replayParked, ReplayStopped, replayPublishOptions, replayTarget, stampHeaders, type ReplayDestination, type ReplayResult, type ReplayStamp, type Rewrite } from './replay';
export { DEFAULT_SEARCH_WINDOW, describeFilter, filterFrom, isEmptyFilter, matchesFilter, MAX_SEARCH_WINDOW, searchWindow, type ParkedFilter } from './filter';
export { countParkedAgain, searchParked, type SearchResult } from './search';
export { PacedReplay, pacedOptionsFrom, type PacedOptions, type PacedState, type PacedStatus } from './paced';
export { changedHeaders, EDIT_HEADERS, editedPublishOptions, checkEditedBody, EditRefused, isLockedHeader, LOCKED_HEADERS, readEdit, type EditedBy, type ParkedEdit } from './edit';
export { browseQueue, type BrowseResult } from './browse';
export { foldReason, NO_REASON_KEY, reasonMatcher } from './fold';
export { GroupPage, GroupTally, groupParked, MAX_GROUPS, peekGroup, type GroupPageResult, type GroupResult, type ParkedGroup } from './groups';
export { QueueWatch, queueDepths, type QueueChecker, type WatchedQueues } from './watch';
