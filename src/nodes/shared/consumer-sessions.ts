/**
 * The consumer sessions of one retry configuration, owned by its retry-config node
 * (`RetryConfigNode.consumers`): the end nodes (settle-node.ts) settle through them, and events for
 * every consumer of the configuration (a replay) reach them here.
 */
import { EventEmitter } from 'node:events';
import type { ErrorClassifier, ErrorKind } from '../../lib/classify';
import type { ConsumerSession } from '../../lib/consume';
import type { FailureDetails } from '../../lib/message';
import type { OutcomeEvent } from '../../lib/observe';
import { SettleError, type SettleAction, type SettleLater, type SettleOutcome } from '../../lib/settle';

export interface ConsumerSessionsEvents {
  /** A parked message of the configuration was replayed to its main queue. */
  replayed: [OutcomeEvent];
}

/**
 * The consumer sessions of one retry configuration, owned by its retry-config node: end nodes settle
 * through them, and events for every consumer of the configuration (a replay) reach them here.
 */
export class ConsumerSessions extends EventEmitter<ConsumerSessionsEvents> {
  private readonly members: Array<{ session: ConsumerSession; owner: string }> = [];
  /** The session that issued the last id asked for: the next one is most likely its too. */
  private last: ConsumerSession | undefined;

  /** @param classifier the configuration's error rules, compiled: a retry-settle in retry mode asks them what a failure is. */
  constructor(readonly classifier?: ErrorClassifier) {
    super();
    // Every consumer node of the configuration listens for replays: dozens are normal, not a leak.
    this.setMaxListeners(0);
  }

  /** Adds a consumer's session; the returned function removes it again (once it has stopped and drained). */
  add(session: ConsumerSession, owner: string): () => void {
    const member = { session, owner };
    this.members.push(member);
    return () => {
      const at = this.members.indexOf(member);
      if (at >= 0) this.members.splice(at, 1);
      if (this.last === session) this.last = undefined;
    };
  }

  /** The session a consumer node (by id) runs: the latest, when a stopping one still drains. */
  of(owner: string): ConsumerSession | undefined {
    return this.members.filter((m) => m.owner === owner).at(-1)?.session;
  }

  /** The last `count` sessions a consumer node added: a partitioned consumer runs one per partition. */
  latestOf(owner: string, count: number): ConsumerSession[] {
    return this.members.filter((m) => m.owner === owner).slice(-count).map((m) => m.session);
  }

  /** The consumer nodes (ids) with a session here, each once, in the order they came. */
  owners(): string[] {
    return [...new Set(this.members.map((m) => m.owner))];
  }

  /** The session that gave out a delivery id, if it is one of these. */
  issuer(deliveryId: string): ConsumerSession | undefined {
    if (this.last?.settles.issued(deliveryId)) return this.last;
    this.last = this.members.find((m) => m.session.settles.issued(deliveryId))?.session;
    return this.last;
  }

  /**
   * Settles the delivery an id names: an ack (or a dead-letter) returns its outcome at once; a copy
   * (retry tier, park), or an ack waiting for its key to be recorded, returns undefined and `later` gets
   * its outcome or error (see `Settles.settleNow`). Throws {@link SettleError} when no session here
   * gave it out, or when it cannot be settled (any more). `kind`: what the error rules made of the failure.
   */
  settle(deliveryId: string, action: SettleAction, reason: string, failure: FailureDetails | undefined, kind: ErrorKind | undefined, later: SettleLater, delayMs?: number): SettleOutcome | undefined {
    const session = this.issuer(deliveryId);
    if (!session) throw consumerGone(deliveryId);
    return session.settles.settleNow(deliveryId, action, reason, failure, kind, later, delayMs);
  }

  /** Tells every consumer of the configuration that a parked message was replayed; each looks at its queues soon (a burst shares a look). */
  replayed(event: OutcomeEvent): void {
    for (const { session } of this.members) session.queues.lookSoon();
    this.emit('replayed', event);
  }
}

/** No consumer here gave out this delivery id (any more): the broker has the message again. */
export function consumerGone(deliveryId: string): SettleError {
  return new SettleError(`message ${deliveryId}: its retry consumer is gone (redeployed?); the broker redelivers the message`, 'unknown');
}
