/**
 * How a msg finds its delivery, and the end nodes that settle it. A retry-config node owns the
 * sessions of its consumers ({@link ConsumerSessions}); a consumer puts the configuration's id on
 * each msg (`msg.amqp.config`) next to the delivery's opaque id. The end nodes' one implementation —
 * `retry-settle` (ack or retry) and `park-publisher` (park) — finds the configuration, whose session
 * that issued the id settles it, and reports a settle that could not happen. Like `http response`
 * ends what `http in` started.
 */
import { EventEmitter } from 'node:events';
import type { ConsumerSession } from '../../lib/consume';
import { failureDetails, type FailureDetails } from '../../lib/message';
import type { OutcomeEvent } from '../../lib/observe';
import { SettleError, type SettleAction, type SettleOutcome } from '../../lib/settle';
import { statusKey, translator } from './i18n';
import { errorText, stringProp, type DoneFunction, type Node, type NodeAPI, type NodeDef, type NodeMessage, type SendFunction } from './node-red';
import { findRetryConfig, type RetryConfigNode } from './retry-config-node';
import { StatusUpdates } from './status';

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

  constructor() {
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

  /** The session that gave out a delivery id, if it is one of these. */
  issuer(deliveryId: string): ConsumerSession | undefined {
    if (this.last?.deliveries.issued(deliveryId)) return this.last;
    this.last = this.members.find((m) => m.session.deliveries.issued(deliveryId))?.session;
    return this.last;
  }

  /**
   * Settles the delivery an id names: an ack (or a dead-letter) at once, a copy (retry tier, park) by
   * a promise (see `Deliveries.settleNow`). Throws {@link SettleError} when no session here gave it out,
   * or when it cannot be settled (any more).
   */
  settle(deliveryId: string, action: SettleAction, reason: string, failure?: FailureDetails): SettleOutcome | Promise<SettleOutcome> {
    const session = this.issuer(deliveryId);
    if (!session) throw consumerGone(deliveryId);
    return session.deliveries.settleNow(deliveryId, action, reason, failure);
  }

  /** Tells every consumer of the configuration that a parked message was replayed. */
  replayed(event: OutcomeEvent): void {
    this.emit('replayed', event);
  }
}

/** No consumer here gave out this delivery id (any more): the broker has the message again. */
function consumerGone(deliveryId: string): SettleError {
  return new SettleError(`message ${deliveryId}: its retry consumer is gone (redeployed?); the broker redelivers the message`, 'unknown');
}

/** The delivery a msg refers to, as the consumer put it on `msg.amqp`. */
function deliveryOf(msg: NodeMessage): { deliveryId?: string; config?: string } {
  const amqp = msg.amqp as { deliveryId?: unknown; config?: unknown } | undefined;
  return {
    deliveryId: typeof amqp?.deliveryId === 'string' ? amqp.deliveryId : undefined,
    config: typeof amqp?.config === 'string' ? amqp.config : undefined,
  };
}

/**
 * Finds the consumer sessions of the retry configuration a msg names. The last configuration found is
 * kept: Node-RED forgets a node as soon as it starts stopping it, and a stopping configuration's
 * consumers still settle what the flow holds (their drain). A msg that does not name its configuration
 * (a msg.amqp built by hand) is looked for among the deployed ones.
 */
export function sessionsFinder(RED: NodeAPI): (configId: string | undefined, deliveryId: string) => ConsumerSessions | undefined {
  let last: RetryConfigNode | undefined;
  return (configId, deliveryId) => {
    if (last && (configId === undefined || last.id === configId) && last.consumers.issuer(deliveryId)) return last.consumers;
    let found = configId === undefined ? undefined : findRetryConfig(RED, configId);
    if (configId === undefined) {
      RED.nodes.eachNode((def) => {
        const config = def.type === 'retry-config' && !found ? findRetryConfig(RED, def.id) : undefined;
        if (config?.consumers.issuer(deliveryId)) found = config;
      });
    }
    if (found) last = found;
    return (found ?? (last && last.id === configId ? last : undefined))?.consumers;
  };
}

/** Sets an end node up: `action` is what its input does (the park-publisher always parks). */
export function settleNode(RED: NodeAPI, node: Node, def: NodeDef, action: SettleAction): void {
  const t = translator(RED);
  const find = sessionsFinder(RED);
  const configuredReason = stringProp(def.reason);
  let parked = 0;
  let lastParkAttempt = 0;
  const status = new StatusUpdates(
    () => {
      if (parked === 0) return undefined;
      // A park node counts its parks; a retry node says when a retry parked, having run out of attempts.
      return action === 'park'
        ? { fill: 'yellow', shape: 'dot', text: t('park-publisher.status.parked', { count: parked }) }
        : { fill: 'yellow', shape: 'dot', text: t('retry-settle.status.parkedAfter', { attempt: lastParkAttempt }) };
    },
    (shown) => node.status(shown),
  );
  node.on('close', () => status.stop());

  const failed = (err: unknown, done: DoneFunction): void => {
    status.forget();
    // Already settled, or its channel gone: the broker redelivers it (or already has): nothing lost,
    // nothing for the flow to handle. Anything else (no delivery id, a failed park) is for a Catch node.
    if (err instanceof SettleError && err.kind !== 'broker') {
      node.status({ fill: 'yellow', shape: 'ring', text: t(`retry-settle.status.${err.kind}`) });
      node.warn(err.message);
      done();
      return;
    }
    node.status({ fill: 'red', shape: 'ring', text: statusKey('retry-settle.status.failed') });
    done(err instanceof Error ? err : new Error(String(err)));
  };

  /** A settle is done: counted on the status; a park sends its msg on, with where and why. */
  const settled = (outcome: SettleOutcome, msg: NodeMessage, send: SendFunction, done: DoneFunction, reason: string): void => {
    if (outcome.done === 'parked') {
      parked += 1;
      lastParkAttempt = outcome.attempt;
      if (parked === 1) status.now();
      else status.soon();
    }
    if (action === 'park') {
      msg.park = { queue: outcome.parkedTo ?? '', reason: outcome.parkReason ?? reason, attempt: outcome.attempt };
      send(msg);
    }
    done();
  };

  node.on('input', (msg, send, done) => {
    const { deliveryId, config } = deliveryOf(msg);
    if (deliveryId === undefined) {
      failed(new Error(`msg.amqp.deliveryId is missing: ${action} needs the msg that came out of a retry consumer (keep msg.amqp when you build a new msg)`), done);
      return;
    }
    const sessions = find(config, deliveryId);
    if (!sessions) {
      failed(consumerGone(deliveryId), done);
      return;
    }
    const reason = errorText(msg.error) || configuredReason;
    let outcome: SettleOutcome | Promise<SettleOutcome>;
    try {
      outcome = sessions.settle(deliveryId, action, reason, failureDetails(msg.error));
    } catch (err) {
      failed(err, done);
      return;
    }
    // An ack is done here and now: the flow's done() follows without a promise or an extra turn.
    if (outcome instanceof Promise) outcome.then((o) => settled(o, msg, send, done, reason), (err: unknown) => failed(err, done));
    else settled(outcome, msg, send, done, reason);
  });
}
