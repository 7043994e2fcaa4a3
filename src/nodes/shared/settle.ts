/**
 * The one way the end nodes settle the delivery a msg refers to, and report a settle that could not
 * happen. The delivery id names the retry-consumer node whose session holds the delivery.
 */
import { translator } from './i18n';
import type { ConsumerSession } from '../../lib/consume/consumer-session';
import { DeliveryRegistry } from '../../lib/consume/registry';
import { failureDetails } from '../../lib/message/failure';
import { SettleError, type SettleAction, type SettleOutcome } from '../../lib/settle/settlement';
import type { DoneFunction, Node, NodeAPI, NodeMessage } from './node-red';

/** A retry-consumer node as the end nodes see it: undefined session when it did not start. */
export interface RetryConsumerNode extends Node {
  session: ConsumerSession | undefined;
}

/**
 * The sessions of the retry-consumer nodes, by node id. Not looked up through RED.nodes.getNode: Node-RED
 * forgets a node as soon as it starts stopping it, and a stopping consumer still settles what the flow
 * holds (its drain).
 */
const sessions = new Map<string, ConsumerSession>();

/** Makes a consumer's session reachable for the end nodes; the returned function removes it again. */
export function registerSession(nodeId: string, session: ConsumerSession): () => void {
  sessions.set(nodeId, session);
  return () => {
    if (sessions.get(nodeId) === session) sessions.delete(nodeId);
  };
}

/** The delivery id a consumer put on `msg.amqp.deliveryId`, if the msg still carries one. */
export function deliveryIdOf(msg: NodeMessage): string | undefined {
  const amqp = msg.amqp as { deliveryId?: unknown } | undefined;
  return typeof amqp?.deliveryId === 'string' ? amqp.deliveryId : undefined;
}

/** Settles the delivery a msg refers to; rejects with {@link SettleError} (or an Error without an id). */
export function settleMessage(msg: NodeMessage, action: SettleAction, reason: string): Promise<SettleOutcome> {
  const id = deliveryIdOf(msg);
  if (id === undefined) {
    return Promise.reject(new Error(`msg.amqp.deliveryId is missing: ${action} needs the msg that came out of a retry consumer (keep msg.amqp when you build a new msg)`));
  }
  const session = sessions.get(DeliveryRegistry.prefixOf(id) ?? '');
  if (!session) {
    return Promise.reject(new SettleError(`message ${id}: its retry consumer is gone (redeployed?); the broker redelivers the message`, 'unknown'));
  }
  // No await: an ack settles at once, and the flow's done() should follow without extra turns.
  return session.settle(id, action, reason, failureDetails(msg.error));
}

/**
 * An end node's input: settles, then hands the outcome on. A delivery that was already settled, or
 * whose channel is gone, is a warning: the broker redelivers it (or already has), so nothing is lost
 * and the flow has nothing to handle. Anything else — no delivery id, a failed park — is an error a
 * Catch node can handle.
 */
export function settleInput(RED: NodeAPI, node: Node, msg: NodeMessage, action: SettleAction, reason: string, done: DoneFunction, settled: (outcome: SettleOutcome) => void): void {
  settleMessage(msg, action, reason).then(
    (outcome) => {
      settled(outcome);
      done();
    },
    (err: unknown) => {
      if (err instanceof SettleError && err.kind !== 'broker') {
        node.status({ fill: 'yellow', shape: 'ring', text: translator(RED)(`retry-settle.status.${err.kind}`) });
        node.warn(err.message);
        done();
        return;
      }
      node.status({ fill: 'red', shape: 'ring', text: translator(RED)('retry-settle.status.failed') });
      done(err instanceof Error ? err : new Error(String(err)));
    },
  );
}
