/**
 * `retry-config` config node: the retry topology (main / retry / parking queues and their arguments)
 * that consumers, publishers and replays share.
 */
import { findBroker } from '../shared/broker-node';
import { stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { ConsumerSessions } from '../shared/consumer-sessions';
import { topologyFromDefinition, type RetryConfigNode } from '../shared/retry-config-node';
import { registerCheckEndpoint } from './check-endpoint';
import { registerDefinitionsEndpoint } from './definitions-endpoint';

export = function register(RED: NodeAPI): void {
  function RetryConfig(this: RetryConfigNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    this.broker = findBroker(RED, def.broker);
    // Owned here: a consumer adds its session, an end node settles through them (found by msg.amqp.config).
    this.consumers = new ConsumerSessions();
    this.problems = [];
    try {
      this.topology = topologyFromDefinition(def);
    } catch (err) {
      this.topology = undefined;
      this.problems.push((err as Error).message);
    }
    if (!this.broker) this.problems.push('no broker configured');
    if (this.problems.length > 0) this.error(`retry configuration '${def.name || stringProp(def.mainQueue) || this.id}': ${this.problems.join('; ')}`);
  }
  RED.nodes.registerType('retry-config', RetryConfig as (this: Node, def: NodeDef) => void);
  registerCheckEndpoint(RED);
  registerDefinitionsEndpoint(RED);
};
