/**
 * `retry-config` config node: the retry topology (main / retry / parking queues and their arguments)
 * that consumers, publishers and replays share.
 */
import { ErrorClassifier, type JsonataCompiler } from '../../lib/classify';
import { resolvePartitionRouting, type PartitionRouting } from '../../lib/topology';
import { findBroker } from '../shared/broker-node';
import { stringProp, type Node, type NodeAPI, type NodeDef, type NodeMessage } from '../shared/node-red';
import { ConsumerSessions } from '../shared/consumer-sessions';
import { ReplayJobs } from '../shared/replay-jobs';
import { topologyFromDefinition, type RetryConfigNode } from '../shared/retry-config-node';
import { registerCheckEndpoint } from './check-endpoint';
import { registerDefinitionsEndpoint } from './definitions-endpoint';

/**
 * JSONata rules run as Node-RED runs them (legacy `msg.` expressions too, `$env`, contexts): compiled
 * once here, evaluated on the failed msg — asynchronously, Node-RED 4 has no other way. An expression
 * that fails on a msg does not match (warned).
 */
function jsonataOf(RED: NodeAPI, node: Node): JsonataCompiler {
  return (text) => {
    const expression = RED.util.prepareJSONataExpression(text, node);
    return (input) =>
      new Promise<boolean>((resolve) => {
        RED.util.evaluateJSONataExpression(expression, (input.msg ?? {}) as NodeMessage, (err, value) => {
          if (err) node.warn(`error rule expression ${JSON.stringify(text)} failed: ${err.message}; taken as no match`);
          resolve(!err && Boolean(value));
        });
      });
  };
}

export = function register(RED: NodeAPI): void {
  function RetryConfig(this: RetryConfigNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    this.broker = findBroker(RED, def.broker);
    this.problems = [];
    try {
      this.topology = topologyFromDefinition(def);
    } catch (err) {
      this.topology = undefined;
      this.problems.push((err as Error).message);
    }
    try {
      this.classifier = new ErrorClassifier(def.errorRules, jsonataOf(RED, this));
    } catch (err) {
      // Rules that cannot be used stop the configuration like any other field: never a silent default.
      this.classifier = undefined;
      this.topology = undefined;
      this.problems.push((err as Error).message);
    }
    // Owned here: a consumer adds its session, an end node settles through them (found by msg.amqp.config).
    this.consumers = new ConsumerSessions(this.classifier);
    // Owned here too: paced replays run as long as the configuration, and stop (between two messages) with it.
    this.replayJobs = new ReplayJobs();
    const jobs = this.replayJobs;
    this.on('close', (_removed: boolean, done: () => void) => {
      void jobs.stopAll('stopped as its retry config closed (a redeploy)').finally(done);
    });
    if (!this.broker) this.problems.push('no broker configured');
    // Resolved once, by the first consumer or publisher that asks; a failed look is not kept.
    let routing: Promise<PartitionRouting> | undefined;
    this.partitionRouting = () => {
      const { topology, broker } = this;
      routing ??= resolvePartitionRouting(topology?.partitionRouting, topology?.mainQueue ?? '', broker?.managementApi).catch((err: unknown) => {
        routing = undefined;
        throw new Error(`partition routing: cannot tell whether the broker has the consistent-hash exchange: ${(err as Error).message}`, { cause: err });
      });
      return routing;
    };
    if (this.problems.length > 0) this.error(`retry configuration '${def.name || stringProp(def.mainQueue) || this.id}': ${this.problems.join('; ')}`);
  }
  RED.nodes.registerType('retry-config', RetryConfig as (this: Node, def: NodeDef) => void);
  registerCheckEndpoint(RED);
  registerDefinitionsEndpoint(RED);
};
