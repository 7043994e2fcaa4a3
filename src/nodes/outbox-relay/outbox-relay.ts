/**
 * `outbox relay`: publishes the outbox table's pending events to RabbitMQ through the broker's
 * confirm publisher (`mandatory`, messageId = the row's id), marks them sent in the claiming
 * transaction, retries failures with a capped backoff and gives up after N attempts (status
 * `failed`: shown on the status and in the metrics, listed and sent again by a msg). Wakes on the
 * write's NOTIFY, polls as well, deletes sent rows after the retention.
 *
 * The composition root: reads the node's properties, builds its `OutboxRelay` on the broker's
 * confirm publisher, and hands both to the node's controller (controller.ts), which owns them until
 * the node closes.
 */
import { OutboxRelay } from '../../lib/outbox';
import { openTelemetryTracer } from '../../lib/trace';
import { findBroker, type RetryBrokerNode } from '../shared/broker-node';
import { statusKey, translator } from '../shared/i18n';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { outboxTarget, type OutboxTarget, type RelayNode } from '../shared/outbox-node';
import { relayProperties, type RelayProperties } from './properties';
import { RelayController } from './controller';

export = function register(RED: NodeAPI): void {
  function OutboxRelayNode(this: RelayNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const props = relayProperties(def);
    const target = outboxTarget(RED, props);
    const broker = findBroker(RED, props.broker);
    const problems = [...('problems' in target ? target.problems : []), ...props.problems];
    if (!broker) problems.push('select a RabbitMQ broker (a retry-broker configuration)');
    if (problems.length > 0 || !broker || 'problems' in target) {
      const problem = `not usable: ${problems.join('; ')}`;
      node.relayHealth = () => ({ table: 'problems' in target ? '' : target.table.display, problem, brokerConnected: broker?.connection.state.phase === 'connected' });
      node.error(`outbox relay ${problem}`);
      node.status({ fill: 'red', shape: 'ring', text: statusKey('outbox-relay.status.invalid') });
      return;
    }
    const relay = buildRelay(node, props, target, broker);
    new RelayController({ node, t: translator(RED), target, broker, relay, pollMs: props.numbers.pollSeconds * 1000 });
  }
  RED.nodes.registerType(NODE_TYPE.outboxRelay, OutboxRelayNode as (this: Node, def: NodeDef) => void);
};

/** The relay over the node's table, publishing through the broker's confirm publisher for this node. */
function buildRelay(node: Node, props: RelayProperties, target: OutboxTarget, broker: RetryBrokerNode): OutboxRelay {
  const n = props.numbers;
  const confirmed = broker.connection.publisher(node.id);
  const publisher = {
    publish: confirmed.publish.bind(confirmed),
    publishBatch: confirmed.publishBatch.bind(confirmed),
    exchangeExists: (exchange: string): Promise<boolean> =>
      broker.connection.withThrowawayChannel((ch) => ch.checkExchange(exchange)).then(
        () => true,
        (err: unknown) => {
          // 404: it does not exist; anything else (no connection) is not an answer: publish and see.
          if ((err as { code?: unknown }).code === 404) return false;
          return true;
        },
      ),
  };
  return new OutboxRelay({
    db: target.database,
    table: target.table,
    publisher,
    batchSize: n.batchSize,
    pollMs: n.pollSeconds * 1000,
    maxAttempts: n.maxAttempts,
    backoff: { initialMs: n.backoffSeconds * 1000, maxMs: n.backoffMaxSeconds * 1000 },
    retentionMs: n.retentionDays * 86_400_000,
    ordered: props.ordered,
    deleteSent: props.deleteSent,
    tracer: openTelemetryTracer(),
  });
}
