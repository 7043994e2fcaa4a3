/**
 * The consumer sessions of one retry configuration, owned by its retry-config node
 * (`RetryConfigNode.consumers`): an end node finds through them the session that settles a msg's
 * delivery ({@link deliveryTarget}), and events for every consumer of the configuration (a replay)
 * reach them here. Like `http response` ends what `http in` started.
 */
import { EventEmitter } from 'node:events';
import type { ErrorClassifier } from '../../lib/classify';
import type { ConsumerSession } from '../../lib/consume';
import type { OutcomeEvent } from '../../lib/observe';
import { SettleError, type SettleAction } from '../../lib/settle';
import { aBatchOf, batchOf } from './batch-msg';
import { findConfig } from './config-lookup';
import type { Node, NodeAPI, NodeMessage } from './node-red';
import { NODE_TYPE } from './node-types';

/** Sends a batch msg out of the consumer's first output again (bisect's halves: the same deliveries, not yet settled). */
export type Resend = (msg: NodeMessage) => void;

export interface ConsumerSessionsEvents {
  /** A parked message of the configuration was replayed to its main queue. */
  replayed: [OutcomeEvent];
}

/**
 * The consumer sessions of one retry configuration, owned by its retry-config node: end nodes settle
 * through them, and events for every consumer of the configuration (a replay) reach them here.
 */
export class ConsumerSessions extends EventEmitter<ConsumerSessionsEvents> {
  private readonly members: Array<{ session: ConsumerSession; owner: string; resend: Resend | undefined }> = [];
  /** The session that issued the last id asked for: the next one is most likely its too. */
  private last: ConsumerSession | undefined;

  /** @param classifier the configuration's error rules, compiled: a retry-settle in retry mode asks them what a failure is. */
  constructor(readonly classifier?: ErrorClassifier) {
    super();
    // Every consumer node of the configuration listens for replays: dozens are normal, not a leak.
    this.setMaxListeners(0);
  }

  /**
   * Adds a consumer's session; the returned function removes it again (once it has stopped and drained).
   * `resend`: a consumer in batch mode sends a batch msg of its deliveries again (bisect's halves) through it.
   */
  add(session: ConsumerSession, owner: string, resend?: Resend): () => void {
    const member = { session, owner, resend };
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

  /** How a consumer in batch mode sends a msg of its session's deliveries again (undefined: not in batch mode). */
  resendOf(session: ConsumerSession): Resend | undefined {
    return this.members.find((m) => m.session === session)?.resend;
  }

  /** Tells every consumer of the configuration that a parked message was replayed; each looks at its queues soon (a burst shares a look). */
  replayed(event: OutcomeEvent): void {
    for (const { session } of this.members) session.queues.lookSoon();
    this.emit('replayed', event);
  }
}

/** A retry-config node as an end node sees it: its id and its consumers' sessions. */
type SessionsOwner = Node & { consumers: ConsumerSessions };

/** The delivery a msg refers to, as the consumer put it on `msg.amqp`. */
export function deliveryOf(msg: NodeMessage): { deliveryId?: string; config?: string } {
  const amqp = msg.amqp as { deliveryId?: unknown; config?: unknown } | undefined;
  return {
    deliveryId: typeof amqp?.deliveryId === 'string' ? amqp.deliveryId : undefined,
    config: typeof amqp?.config === 'string' ? amqp.config : undefined,
  };
}

/** Where a msg's delivery is settled: its id, its configuration's sessions and the session that issued it. */
export interface DeliveryTarget {
  deliveryId: string;
  /** The retry configuration the msg names (`msg.amqp.config`). */
  config: string | undefined;
  sessions: ConsumerSessions;
  session: ConsumerSession;
}

/**
 * Finds where a delivery is settled: the consumer sessions of the retry configuration a msg names and
 * the session among them that issued the delivery id (asked once per settle: the id is read on the
 * settle's hot path). The last configuration found is kept: Node-RED forgets a node as soon as it
 * starts stopping it, and a stopping configuration's consumers still settle what the flow holds
 * (their drain). A msg that does not name its configuration (a msg.amqp built by hand) is looked for
 * among the deployed ones.
 */
export function targetFinder(RED: NodeAPI): (configId: string | undefined, deliveryId: string) => DeliveryTarget | undefined {
  let last: SessionsOwner | undefined;
  const find = (id: string): SessionsOwner | undefined => findConfig<SessionsOwner>(RED, NODE_TYPE.retryConfig, id);
  const target = (owner: SessionsOwner | undefined, config: string | undefined, deliveryId: string): DeliveryTarget | undefined => {
    const session = owner?.consumers.issuer(deliveryId);
    return owner && session ? { deliveryId, config, sessions: owner.consumers, session } : undefined;
  };
  return (configId, deliveryId) => {
    if (last && (configId === undefined || last.id === configId)) {
      const found = target(last, configId, deliveryId);
      if (found) return found;
    }
    let found = configId === undefined ? undefined : find(configId);
    if (configId === undefined) {
      RED.nodes.eachNode((def) => {
        const config = def.type === NODE_TYPE.retryConfig && !found ? find(def.id) : undefined;
        if (config?.consumers.issuer(deliveryId)) found = config;
      });
    }
    if (found) last = found;
    return target(found ?? (last && last.id === configId ? last : undefined), configId, deliveryId);
  };
}

/** The target of a msg's settle (`action`), or why it has none (an error for the end node to report). */
export function deliveryTarget(find: ReturnType<typeof targetFinder>, msg: NodeMessage, action: SettleAction): DeliveryTarget | Error {
  const batch = batchOf(msg);
  if (batch) return batchRefused(batch.items.length);
  const { deliveryId, config } = deliveryOf(msg);
  if (deliveryId === undefined) return new Error(`msg.amqp.deliveryId is missing: ${action} needs the msg that came out of a retry consumer (keep msg.amqp when you build a new msg)`);
  return find(config, deliveryId) ?? consumerGone(deliveryId);
}

/** A batch msg reached what settles one delivery: nothing is settled, the items stay in flight (their settle timeout ends them). */
export function batchRefused(size: number): Error {
  return new Error(`${aBatchOf(size)}: settle it with retry-settle or park-publisher`);
}

/** No consumer here gave out this delivery id (any more): the broker has the message again. */
export function consumerGone(deliveryId: string): SettleError {
  return new SettleError(`message ${deliveryId}: its retry consumer is gone (redeployed?); the broker redelivers the message`, 'unknown');
}
