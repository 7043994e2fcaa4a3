/**
 * How a msg finds its delivery, and the end nodes that settle it. A retry-config node owns the
 * sessions of its consumers ({@link ConsumerSessions}); a consumer puts the configuration's id on
 * each msg (`msg.amqp.config`) next to the delivery's opaque id. The end nodes' one implementation —
 * `retry-settle` (ack or retry) and `park-publisher` (park) — finds the configuration, whose session
 * that issued the id settles it, and reports a settle that could not happen. Like `http response`
 * ends what `http in` started.
 */
import { permanentReason, type Classification, type ErrorKind } from '../../lib/classify';
import { failureDetails } from '../../lib/message';
import { SettleError, type SettleAction, type SettleOutcome } from '../../lib/settle';
import { consumerGone, type ConsumerSessions } from './consumer-sessions';
import { statusKey, translator } from './i18n';
import { errorText, stringProp, type DoneFunction, type Node, type NodeAPI, type NodeDef, type NodeMessage, type SendFunction } from './node-red';
import { findRetryConfig, type RetryConfigNode } from './retry-config-node';
import { requestedDelay, ShortWaitWarnings } from './retry-delay';
import { StatusUpdates } from './status';

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
  /** The last park was of a permanent failure (error rules): parked at once, not out of attempts. */
  let lastParkPermanent = false;
  const status = new StatusUpdates(
    () => {
      if (parked === 0) return undefined;
      // A park node counts its parks; a retry node says when a retry parked, having run out of attempts.
      return action === 'park'
        ? { fill: 'yellow', shape: 'dot', text: t('park-publisher.status.parked', { count: parked }) }
        : { fill: 'yellow', shape: 'dot', text: t(lastParkPermanent ? 'retry-settle.status.parkedPermanent' : 'retry-settle.status.parkedAfter', { attempt: lastParkAttempt }) };
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
  const settled = (outcome: SettleOutcome, msg: NodeMessage, send: SendFunction, done: DoneFunction, reason: string, kind?: ErrorKind): void => {
    if (outcome.done === 'parked') {
      parked += 1;
      lastParkAttempt = outcome.attempt;
      lastParkPermanent = kind === 'permanent';
      if (parked === 1) status.now();
      else status.soon();
    }
    if (action === 'park') {
      msg.park = { queue: outcome.parkedTo ?? '', reason: outcome.parkReason ?? reason, attempt: outcome.attempt };
      send(msg);
    }
    done();
  };

  /** The settles not done at once (a copy, an ack waiting for its key to be recorded), by delivery id: one callback for all, no closure per settle. */
  const pending = new Map<string, { msg: NodeMessage; send: SendFunction; done: DoneFunction; why: string; kind?: ErrorKind }>();
  /** Called from inside the gate or a confirm: nothing is thrown there. */
  const later = (result: SettleOutcome | Error, deliveryId: string): void => {
    const p = pending.get(deliveryId);
    if (!p) return;
    pending.delete(deliveryId);
    try {
      if (result instanceof Error) failed(result, p.done);
      else settled(result, p.msg, p.send, p.done, p.why, p.kind);
    } catch (err) {
      node.error(errorText(err));
    }
  };

  const shortWaits = new ShortWaitWarnings((text) => node.warn(text));

  /**
   * Settles as decided: `how` the action, `why` the reason, `kind` what the error rules made of it,
   * `delayMs` the wait a retry asked for (msg.retry.delay, Retry-After).
   */
  const settle = (sessions: ConsumerSessions, deliveryId: string, msg: NodeMessage, send: SendFunction, done: DoneFunction, how: SettleAction, why: string, kind?: ErrorKind, delayMs = 0): void => {
    let outcome: SettleOutcome | undefined;
    if (delayMs > 0) shortWaits.check(findRetryConfig(RED, deliveryOf(msg).config)?.topology, msg, delayMs);
    try {
      outcome = sessions.settle(deliveryId, how, why, how === 'ack' ? undefined : failureDetails(msg.error), kind, later, delayMs);
    } catch (err) {
      failed(err, done);
      return;
    }
    // An ack is mostly done here and now: the flow's done() follows without a promise or an extra turn.
    if (outcome !== undefined) settled(outcome, msg, send, done, why, kind);
    else pending.set(deliveryId, { msg, send, done, why, kind }); // `later` is never called before settle returns
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
    // Ack and park settle as asked; a retry is what the configuration's error rules make of the failure.
    if (action !== 'retry') return settle(sessions, deliveryId, msg, send, done, action, reason);
    const classifier = sessions.classifier;
    if (!classifier || classifier.size === 0) return settle(sessions, deliveryId, msg, send, done, 'retry', reason, 'transient', requestedDelay(msg));
    const apply = (c: Classification): void => {
      if (c.kind === 'done') settle(sessions, deliveryId, msg, send, done, 'ack', reason, 'done');
      else if (c.kind === 'permanent') settle(sessions, deliveryId, msg, send, done, 'retry', permanentReason(c.rule, reason), 'permanent');
      else settle(sessions, deliveryId, msg, send, done, 'retry', reason, 'transient', requestedDelay(msg, c));
    };
    const classified = classifier.classify({ error: msg.error, statusCode: msg.statusCode, msg });
    if (classified instanceof Promise) classified.then(apply, (err: unknown) => failed(err, done));
    else apply(classified);
  });
}
