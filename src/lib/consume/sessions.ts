/**
 * The consumer sessions of one retry configuration, owned by it. An end node reaches the delivery a
 * msg refers to through them (the msg names its configuration; the delivery id itself is opaque), and
 * events that concern every consumer of the configuration (a replay of its parking queue) reach them here.
 */
import { EventEmitter } from 'node:events';
import type { FailureDetails } from '../message';
import type { OutcomeEvent } from '../observe';
import { SettleError, type SettleAction, type SettleOutcome } from '../settle';
import type { ConsumerSession } from './consumer-session';
import { DeliveryRegistry } from './registry';

export interface ConsumerSessionsEvents {
  /** A parked message of this configuration was replayed to its main queue. */
  replayed: [OutcomeEvent];
}

interface Member {
  session: ConsumerSession;
  /** Who runs the session, e.g. the consumer node's id. */
  owner: string;
}

export class ConsumerSessions extends EventEmitter<ConsumerSessionsEvents> {
  /** By the token of each session's delivery ids. */
  private readonly members = new Map<string, Member>();

  constructor() {
    super();
    // Every consumer node of the configuration listens for replays: dozens are normal, not a leak.
    this.setMaxListeners(0);
  }

  /** Adds a session; the returned function removes it again (once the session stopped and drained). */
  add(session: ConsumerSession, owner: string): () => void {
    const token = session.deliveries.token;
    const member = { session, owner };
    this.members.set(token, member);
    return () => {
      if (this.members.get(token) === member) this.members.delete(token);
    };
  }

  /** The session a consumer (by owner) runs, if it is here: the latest, when a stopping one still drains. */
  of(owner: string): ConsumerSession | undefined {
    let found: ConsumerSession | undefined;
    for (const member of this.members.values()) if (member.owner === owner) found = member.session;
    return found;
  }

  /** Whether one of these sessions issued a delivery id. */
  issued(deliveryId: string): boolean {
    return this.members.has(DeliveryRegistry.tokenOf(deliveryId) ?? '');
  }

  /** Settles the delivery an id names; rejects with {@link SettleError} when no session here has it. */
  settle(deliveryId: string, action: SettleAction, reason: string, failure?: FailureDetails): Promise<SettleOutcome> {
    const member = this.members.get(DeliveryRegistry.tokenOf(deliveryId) ?? '');
    if (!member) {
      return Promise.reject(new SettleError(`message ${deliveryId}: its retry consumer is gone (redeployed?); the broker redelivers the message`, 'unknown'));
    }
    return member.session.deliveries.settle(deliveryId, action, reason, failure);
  }

  /** Tells every consumer of the configuration that a parked message was replayed. */
  replayed(event: OutcomeEvent): void {
    this.emit('replayed', event);
  }
}
