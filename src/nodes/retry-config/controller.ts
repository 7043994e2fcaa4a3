/**
 * A retry-config node at work: its topology and error rules read from the definition, the consumer
 * sessions and paced replays it owns (stopped when it closes), and its partition routing, resolved on
 * the broker once.
 */
import { ErrorClassifier, type JsonataCompiler } from '../../lib/classify';
import { resolvePartitionRouting, type PartitionRouting } from '../../lib/topology';
import { findBroker } from '../shared/broker-node';
import type { Node, NodeAPI, NodeMessage } from '../shared/node-red';
import { ConsumerSessions } from '../shared/consumer-sessions';
import { translator } from '../shared/i18n';
import { ReplayJobs } from '../shared/replay-jobs';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { warnClassicOnCluster } from './cluster-warning';
import type { RetryConfigProperties } from './properties';

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

export class RetryConfigController {
  /** Resolved once, by the first consumer or publisher that asks; a failed look is not kept. */
  private routing: Promise<PartitionRouting> | undefined;

  constructor(
    RED: NodeAPI,
    private readonly node: RetryConfigNode,
    props: RetryConfigProperties,
  ) {
    node.broker = findBroker(RED, props.broker);
    node.problems = [...props.problems];
    node.topology = props.topology;
    try {
      node.classifier = new ErrorClassifier(props.errorRules, jsonataOf(RED, node));
    } catch (err) {
      // Rules that cannot be used stop the configuration like any other field: never a silent default.
      node.classifier = undefined;
      node.topology = undefined;
      node.problems.push((err as Error).message);
    }
    // Owned here: a consumer adds its session, an end node settles through them (found by msg.amqp.config).
    node.consumers = new ConsumerSessions(node.classifier);
    // Owned here too: paced replays run as long as the configuration, and stop (between two messages) with it.
    node.replayJobs = new ReplayJobs();
    if (!node.broker) node.problems.push('no broker configured');
    node.partitionRouting = () => this.partitionRouting();
    const name = props.label || node.id;
    if (node.problems.length > 0) node.error(`retry configuration '${name}': ${node.problems.join('; ')}`);
    // Classic main or parking queues on a cluster of several nodes: said once at deploy (issue 53).
    if (node.topology) void warnClassicOnCluster(node, translator(RED), name, node.topology, node.broker?.managementApi);
  }

  partitionRouting(): Promise<PartitionRouting> {
    const { topology, broker } = this.node;
    this.routing ??= resolvePartitionRouting(topology?.partitionRouting, topology?.mainQueue ?? '', broker?.managementApi).catch((err: unknown) => {
      this.routing = undefined;
      throw new Error(`partition routing: cannot read the type of the partition exchange: ${(err as Error).message}`, { cause: err });
    });
    return this.routing;
  }

  close(): Promise<void> {
    return this.node.replayJobs.stopAll('stopped as its retry config closed (a redeploy)');
  }
}
