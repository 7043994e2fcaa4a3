/**
 * `retry-broker` config node: one shared AMQP connection per broker (controller.ts), from the
 * settings its definition gives (settings.ts); its status texts in status.ts, its dialog in editor.ts.
 */
import { resolveEnvFields } from '../../lib/connection';
import type { RetryBrokerNode } from '../shared/broker-node';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { brokerProperties } from '../shared/broker-properties';
import { NODE_TYPE } from '../shared/node-types';
import { BrokerController } from './controller';
import { brokerSetup } from './settings';

export = function register(RED: NodeAPI): void {
  function RetryBroker(this: RetryBrokerNode, saved: NodeDef): void {
    RED.nodes.createNode(this, saved);
    const node = this;
    // URL, host and management URL may name an environment variable (flow, group or process env).
    const props = brokerProperties(resolveEnvFields(saved, (name) => RED.util.evaluateNodeProperty(name, 'env', node)));
    const controller = new BrokerController(RED, node, props.name || node.id, brokerSetup(RED, node, props));
    node.on('close', (_removed, done) => {
      controller.close().then(done, done);
    });
  }
  RED.nodes.registerType(NODE_TYPE.retryBroker, RetryBroker as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
