/**
 * consume — consuming the main queue of a retry topology: the session's lifecycle (topology check,
 * consume, reconnect, pause, stop and drain) and the parts it owns — its channel (consumer-channel),
 * its setups' re-checks (recheck) and the timers they arm (timers), why it pauses (pauses), where deliveries enter (intake), its
 * deliveries on arrival (deliveries) and their settles (settles) — the retry mover for quorum tiers,
 * batch mode's collecting (batcher), and the share of a partitioned configuration's partitions among
 * its instances (members, partition-share).
 */
export { ConsumerSession } from './consumer-session';
export { brokerCancelText, cancelCause, type BrokerCancel } from './broker-cancel';
export { Breaker, downstreamFailed, type CircuitView } from './breaker';
export { Throttle, type HeldDelivery } from './throttle';
export { Batcher, batchPrefetch, MAX_BATCH_SIZE, type BatcherOptions } from './batcher';
export { realTimers, type Timers } from './timers';
export { Admission, NO_DEDUPE_KEY, type Arrival, type DeliveryDedupe } from './admission';
export { ConsumerDepths, type DepthWatch } from './depths';
export { Deliveries } from './deliveries';
export { Settles, type RunAgain } from './settles';
export { DeliveryRegistry, notSettleable, type DeliveryStatus, type NotLive } from './registry';
export { Drain } from './drain';
export { PartitionMembers, membersRoutingKey, MEMBERS_EXCHANGE, type PartitionMembersOptions } from './members';
export { MemberTable, ownPartitions, sharePartitions } from './partition-share';
export { Orphans } from './orphans';
export { RetryMover, dueAt, moverTiers, type MoverTier, type RetryMoverOptions } from './retry-mover';
export type { ConsumerSessionEvents, ConsumerSessionOptions, SessionConnection, SessionDedupe, SessionPhase, SessionState, SessionStats, Settled, StopOptions, DeliveriesOptions, DeliveryEvents } from './types';
