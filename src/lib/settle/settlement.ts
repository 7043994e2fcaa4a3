/** What settling a delivery means to the nodes: the actions, the outcome, and why a settle failed. */
import type { ConsumeMessage } from 'amqplib';
import type { AckBatcher } from './ack-batcher';
import type { RetryInfo } from '../message/attempts';
import type { NotLive } from '../consume/registry';

export type SettleAction = 'ack' | 'retry' | 'park';

/** A delivery waiting to be settled; it stays in the session's registry, never on `msg`. */
export interface TrackedDelivery {
  id: string;
  /** Settles on the channel it came from (acks batched per event-loop turn). */
  acks: AckBatcher;
  message: ConsumeMessage;
  retry: RetryInfo;
  /** When the consumer received it (ms since epoch): the age of a message without other clues. */
  receivedAt: number;
  /** When it is settled by the settle timeout (`performance.now()` time; Infinity without one). */
  deadline: number;
}

export interface SettleOutcome {
  /** What was done: a retry on the last attempt parks, so this can differ from the action asked. */
  done: 'acked' | 'retried' | 'parked';
  attempt: number;
  parkReason?: string;
  /** The parking queue, when parked. */
  parkedTo?: string;
}

export type SettleFailureKind = 'already-settled' | 'stale' | 'unknown' | 'broker';

export class SettleError extends Error {
  constructor(
    message: string,
    readonly kind: SettleFailureKind,
  ) {
    super(message);
    this.name = 'SettleError';
  }
}

/** How the registry remembers a settle that was asked for. */
export const PAST_TENSE: Readonly<Record<SettleAction, string>> = { ack: 'acked', retry: 'retried', park: 'parked' };

/** Why a delivery that is no longer live cannot be settled. */
export function notSettleable(status: NotLive, id: string, action: SettleAction): SettleError {
  switch (status.status) {
    case 'ended':
      return new SettleError(`message ${id} was already settled (${status.how}); this ${action} is ignored`, 'already-settled');
    case 'stale':
      return new SettleError(`message ${id} cannot be settled any more: ${status.how}; this ${action} is ignored`, 'stale');
    default:
      return new SettleError(`message ${id} is not known to this consumer (redeployed?); this ${action} is ignored`, 'unknown');
  }
}
