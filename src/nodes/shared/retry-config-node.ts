/** The retry-config node's shape as other nodes see it. */
import type { ErrorClassifier } from '../../lib/classify';
import type { ConsumerSessions } from './consumer-sessions';
import type { ReplayJobs } from './replay-jobs';
import type { PartitionRouting, RetryTopologyConfig } from '../../lib/topology';
import type { RetryBrokerNode } from './broker-node';
import { findConfig } from './config-lookup';
import type { Node, NodeAPI } from './node-red';
import { NODE_TYPE } from './node-types';

export interface RetryConfigNode extends Node {
  /** undefined when the configuration is invalid; `problems` then says why. */
  topology: RetryTopologyConfig | undefined;
  problems: string[];
  broker: RetryBrokerNode | undefined;
  /** Its error rules, compiled (`errorRules`): a retry-settle in retry mode asks them what a failure is. */
  classifier: ErrorClassifier | undefined;
  /** The consumer sessions of this configuration: end nodes settle through them, replays are told to them. */
  consumers: ConsumerSessions;
  /** Its paced replays (started from the admin API or a park-replay node), stopped when it closes. */
  replayJobs: ReplayJobs;
  /**
   * A partitioned configuration's routing, resolved on the broker once (`auto`: the partition exchange's
   * type when it exists, else the consistent-hash exchange when the broker has it, else computed).
   */
  partitionRouting(): Promise<PartitionRouting>;
}

/** A retry-consumer node as others see it: its session is its configuration's (`consumers.of(id)`). */
export interface RetryConsumerNode extends Node {
  /** Why it did not start (its configuration cannot work); undefined once it runs. */
  startProblem?: string;
}

export function findRetryConfig(RED: NodeAPI, id: unknown): RetryConfigNode | undefined {
  return findConfig<RetryConfigNode>(RED, NODE_TYPE.retryConfig, id);
}

export { topologyFromDefinition, topologyProblemsOf } from './topology-definition';
