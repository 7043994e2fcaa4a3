/**
 * The settle decision: what a settle asked for becomes, given the attempt, the max age, the backoff
 * tiers, the queue type and the consumer's mode. Pure — no channel, no clock of its own — so every
 * branch is unit-tested without a broker; `settler.ts` carries the decision out.
 */
import type { MessageProperties, Options } from 'amqplib';
import { attemptsExhausted, DEFAULT_PARK_REASON, type DeathRecord, type FailureDetails, firstFailureMs, firstSeenMs, malformedDeathHeader, NOT_BEFORE_HEADER, originalRoute, parkedPublishOptions, readDeaths, type RetryInfo, retryPublishOptions } from '../message';
import type { ErrorKind } from '../classify';
import type { SettleAction } from './settlement';
import { movedByPackage, retryQueueChoice, retryRoute, type RetryRoute, type RetryTopologyConfig } from '../topology';

export type Decision =
  /** Done: ack the delivery. */
  | { kind: 'ack' }
  /** Retry by rejecting without requeue: the main queue's dead-letter exchange takes it to the retry queue. */
  | { kind: 'dead-letter' }
  /** Retry by rejecting with requeue: the quorum main queue delays it itself (broker-native delayed retry, RabbitMQ 4.3+). */
  | { kind: 'broker-retry' }
  /** Retry by a confirmed copy in the retry queue of the attempt's tier, then ack. */
  | { kind: 'republish'; queue: string; options: Options.Publish }
  /** Ordered mode: keep it unacked at the head of the queue and run it again after a pause. */
  | { kind: 'hold'; reason: string }
  /** A confirmed copy in the parking queue, then ack. */
  | { kind: 'park'; queue: string; reason: string; options: Options.Publish };

/** A decision carried out by a confirmed copy before the ack. */
export type CopyDecision = Extract<Decision, { kind: 'republish' | 'park' }>;

/** What a consumer's decisions depend on, fixed when it starts. */
export interface DecisionPolicy {
  topology: Pick<RetryTopologyConfig, 'mainQueue' | 'parkingQueue' | 'maxAgeMs' | 'retryQueue' | 'retryDelaysMs' | 'retryJitterPercent'>;
  route: RetryRoute;
  /** Strict ordered processing: a retry holds the message instead of letting others overtake it. */
  ordered: boolean;
  /** Copies for the retry tiers carry their due time ({@link NOT_BEFORE_HEADER}): the retry mover serves them. */
  dueHeader?: boolean;
  /** Picks a jitter sub-tier (0 ≤ r < 1); Math.random when absent. */
  random?: () => number;
}

export function decisionPolicy(topology: RetryTopologyConfig, ordered: boolean): DecisionPolicy {
  const dueHeader = topology.retryDelaysMs.some((delayMs) => movedByPackage(topology, delayMs));
  return { topology, route: retryRoute(topology), ordered, dueHeader };
}

/** The parts of a delivery a decision reads. */
export interface Decidable {
  message: { content: Buffer; properties: MessageProperties; fields: { exchange: string; routingKey: string } };
  retry: Pick<RetryInfo, 'attempt' | 'maxAttempts'>;
  /** When the consumer received it (ms since epoch): its first-seen time when nothing else tells. */
  receivedAt: number;
}

export type InvalidBodyPolicy = 'park' | 'error';

/** What happens to a delivery on arrival: a body that does not decode is parked or reported, never passed on. */
export function onArrival(decodeError: string | undefined, policy: InvalidBodyPolicy): 'deliver' | 'report-invalid' | 'park' {
  if (decodeError === undefined) return 'deliver';
  return policy === 'error' ? 'report-invalid' : 'park';
}

/** Park reason of a retry whose `x-death` header the broker could not have written. */
export const MALFORMED_X_DEATH = 'malformed x-death header';

const ACK: Decision = { kind: 'ack' };
const DEAD_LETTER: Decision = { kind: 'dead-letter' };
const BROKER_RETRY: Decision = { kind: 'broker-retry' };

/** When the message was first seen (ms since epoch); receipt by this consumer when nothing tells. */
function firstSeen(policy: DecisionPolicy, delivery: Decidable, deaths: DeathRecord[]): number {
  const { properties } = delivery.message;
  return firstSeenMs(properties.headers, properties.timestamp, policy.topology.mainQueue, deaths) ?? delivery.receivedAt;
}

/**
 * Decides a settle. `reason` is the flow's error text (may be empty), `failure` the details of its
 * error object; `now` is ms since epoch. A retry parks once attempts are exhausted or the message is
 * older than the max age. `kind` is what the configuration's error rules made of the failure: a
 * permanent one is parked at once with `reason` (ordered mode too: it does not hold the line), no
 * attempt spent; a parked one carries its kind in the `park-error-kind` header. `delayMs`: the wait the
 * flow asked for (`msg.retry.delay`, an HTTP `Retry-After`): a retry tier at least that long (the
 * longest when none is); the one retry queue of the dead-letter route and the broker's own delay
 * cannot lengthen it (see `retryWaitMs`).
 */
export function decide(policy: DecisionPolicy, delivery: Decidable, action: SettleAction, reason: string, now: number, failure?: FailureDetails, kind?: ErrorKind, delayMs = 0): Decision {
  if (action === 'ack' || (action === 'retry' && kind === 'done')) return ACK;
  const { topology } = policy;
  // The x-death records, read at most once per decision (first seen, first failure and the original
  // route all use them), and not at all for a plain dead-letter retry.
  let read: DeathRecord[] | undefined;
  const deaths = (): DeathRecord[] => (read ??= readDeaths(delivery.message.properties.headers));
  let parkReason = reason || DEFAULT_PARK_REASON;
  if (action === 'retry' && kind !== 'permanent') {
    const lastError = reason ? `; last error: ${reason}` : '';
    // Never reject such a message: RabbitMQ 3.10 crashes the queue dead-lettering it. A producer forged
    // its header: it is parked at its first failure, in ordered mode too (it would not heal by waiting).
    const malformed = malformedDeathHeader(delivery.message.properties.headers);
    if (malformed === undefined && policy.ordered) return { kind: 'hold', reason };
    const { retry } = delivery;
    if (malformed !== undefined) {
      parkReason = `${MALFORMED_X_DEATH} (${malformed})${lastError}`;
    } else if (attemptsExhausted(retry)) {
      parkReason = `max attempts (${retry.maxAttempts}) reached${lastError}`;
    } else {
      // First-seen reads the headers: only when a max age asks for it, or a republished copy carries it.
      const seen = topology.maxAgeMs > 0 ? firstSeen(policy, delivery, deaths()) : undefined;
      if (seen !== undefined && now - seen > topology.maxAgeMs) {
        parkReason = `older than the max age of ${topology.maxAgeMs / 1000} s${lastError}`;
      } else if (policy.route === 'dead-letter') {
        return DEAD_LETTER;
      } else if (policy.route === 'broker') {
        return BROKER_RETRY;
      } else {
        const { properties, fields } = delivery.message;
        const firstFailure = firstFailureMs(properties.headers, topology.mainQueue, now, deaths());
        const route = originalRoute(properties.headers, topology.mainQueue, fields, deaths());
        const options = retryPublishOptions(properties, retry.attempt, seen ?? firstSeen(policy, delivery, deaths()), route, firstFailure);
        const choice = retryQueueChoice(topology, retry.attempt, delayMs, policy.random);
        if (policy.dueHeader) (options.headers as Record<string, unknown>)[NOT_BEFORE_HEADER] = now + choice.delayMs;
        return { kind: 'republish', queue: choice.queue, options };
      }
    }
  }
  const { message } = delivery;
  const options = parkedPublishOptions({
    content: message.content,
    properties: message.properties,
    fields: message.fields,
    mainQueue: topology.mainQueue,
    attempts: delivery.retry.attempt,
    reason: parkReason,
    now: new Date(now),
    firstFailureMs: firstFailureMs(message.properties.headers, topology.mainQueue, now, deaths()),
    deaths: deaths(),
    ...(failure ? { failure } : {}),
    ...(kind === 'permanent' || kind === 'transient' ? { kind } : {}),
  });
  return { kind: 'park', queue: topology.parkingQueue, reason: parkReason, options };
}
