/**
 * `retry-publish`: publishes msg.payload with publisher confirms and `mandatory`, or answers a consumed
 * message on its `replyTo` queue with the same correlationId. The msg goes on only once the broker
 * confirmed it; a message nobody could route is an error, not a silent loss.
 *
 * The composition root: reads the node's properties, its broker and its partitioned route, and hands
 * them to the node's controller (controller.ts).
 */
import { findBroker } from '../shared/broker-node';
import { statusKey, translator } from '../shared/i18n';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { PublishController } from './controller';
import { partitionSettings } from './partition-key';
import { publishProperties } from './properties';

export = function register(RED: NodeAPI): void {
  function RetryPublish(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const props = publishProperties(def);
    const broker = findBroker(RED, props.broker);
    if (!broker) {
      node.status({ fill: 'red', shape: 'ring', text: statusKey('retry-publish.status.noBroker') });
      node.error('publish node not started: no broker configured');
      return;
    }
    // Partitioned: the msg's key picks a partition of a partitioned retry configuration.
    const partitions = partitionSettings(RED, node, props.partitions, props.partitionKey);
    if (partitions.problem !== undefined) {
      node.status({ fill: 'red', shape: 'ring', text: partitions.problem });
      node.error(`publish node not started: ${partitions.problem}`);
      return;
    }
    const { settings, declareQueue } = props;
    new PublishController({ node, t: translator(RED), broker, settings, route: settings.mode === 'publish' ? partitions.route : undefined, declareQueue });
  }
  RED.nodes.registerType(NODE_TYPE.retryPublish, RetryPublish);
};
