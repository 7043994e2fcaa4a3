/**
 * settle — what a settle asked for becomes (`decide`, pure), and carrying it out on the delivery's
 * channel: batched acks and dead-letter nacks, confirmed copies before the ack, ordered mode's hold.
 */
export { decide, decisionPolicy, onArrival, MALFORMED_X_DEATH, type CopyDecision, type Decidable, type Decision, type DecisionPolicy, type InvalidBodyPolicy } from './decide';
export { AckBatcher, Settler, type AckChannel, type CopyPublisher, type ImmediateDecision, type Scheduler } from './settler';
export { OrderedHold, type OrderedHoldEvents } from './ordered-hold';
export { PAST_TENSE, SettleError, staleDelivery, type AckTarget, type DeliverySpans, type SettleAction, type SettleFailureKind, type SettleLater, type SettleOutcome, type TrackedDelivery } from './settlement';
