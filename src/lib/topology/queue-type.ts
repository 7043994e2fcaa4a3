/**
 * The queue type of a retry configuration's main and parking queues as a field of its own (issue 53):
 * `classic` (one node holds the queue) or `quorum` (replicated over the cluster's nodes). The field
 * sets `x-queue-type` on the main queue (every partition) and the parking queue; the extra arguments
 * may say the same, never another type. A configuration saved before the field has none: its extra
 * arguments decide, as before. And which of those queues are classic on a broker that is a cluster of
 * several nodes, where a lost node (with its disk) loses a classic queue's messages. Pure.
 */
import type { QueueArguments } from './arguments';
import { QUEUE_TYPE } from './broker-retry';
import type { RetryTopologyConfig } from './config';
import { planTopology } from './plan';

export type QueueTypeChoice = 'classic' | 'quorum';
export const QUEUE_TYPES: readonly QueueTypeChoice[] = ['classic', 'quorum'];

/** The field's value as a choice; undefined when absent or empty (a configuration saved before the field). */
export function queueTypeOf(value: unknown): QueueTypeChoice | undefined {
  return QUEUE_TYPES.find((type) => type === value);
}

/** A queue type field that is set but not one of the choices, as a sentence; undefined when fine or absent. */
export function queueTypeFieldProblem(value: unknown): string | undefined {
  if (value === undefined || value === '' || queueTypeOf(value) !== undefined) return undefined;
  return `queue type ${JSON.stringify(value)} is not one of ${QUEUE_TYPES.join(', ')}`;
}

/**
 * A queue's extra arguments with the field's type in them. `problem`: the extra arguments name another
 * `x-queue-type` (a sentence naming both, for the argument field and the queue type field alike).
 */
export function withQueueType(args: QueueArguments, type: QueueTypeChoice | undefined, role: 'main' | 'parking'): { args: QueueArguments; problem?: string } {
  if (type === undefined) return { args };
  const given = args[QUEUE_TYPE];
  if (given !== undefined && given !== type) {
    return { args, problem: `${role} queue argument ${QUEUE_TYPE} is ${JSON.stringify(given)} but the queue type field says ${type}: choose one (remove ${QUEUE_TYPE} from the extra arguments, or set the queue type to match)` };
  }
  return { args: { ...args, [QUEUE_TYPE]: type } };
}

/** Applies the field to a configuration's main and parking queue arguments; the problems found (empty when fine). */
export function applyQueueType(config: RetryTopologyConfig, value: unknown): string[] {
  const fieldProblem = queueTypeFieldProblem(value);
  if (fieldProblem !== undefined) return [fieldProblem];
  const type = queueTypeOf(value);
  const main = withQueueType(config.mainQueueArguments, type, 'main');
  const parking = withQueueType(config.parkingQueueArguments, type, 'parking');
  config.mainQueueArguments = main.args;
  config.parkingQueueArguments = parking.args;
  return [main.problem, parking.problem].filter((p): p is string => p !== undefined);
}

/** A queue that lives on one node: classic (no `x-queue-type`, or `classic`). Quorum and stream queues are replicated. */
function onOneNode(args: QueueArguments): boolean {
  const type = args[QUEUE_TYPE];
  return type === undefined || type === 'classic';
}

/**
 * The main (every partition) and parking queues this configuration declares as classic queues. An
 * existing main queue (not the configuration's) is left out: it is only checked, never declared.
 */
export function classicQueuesOf(config: RetryTopologyConfig): string[] {
  const plan = planTopology(config);
  return plan.queues
    .filter((q) => (q.role === 'main' && plan.existingMainQueue !== true) || q.role === 'parking')
    .filter((q) => onOneNode(q.arguments))
    .map((q) => q.name);
}

/** What a broker says of its cluster (the management API's `/api/nodes`). */
export interface ClusterReader {
  clusterNodes(): Promise<string[]>;
}

/** Classic queues declared on a broker whose cluster has several nodes: they and the nodes; undefined on one node or with no classic queue. */
export interface ClassicOnCluster {
  queues: string[];
  nodes: string[];
}

export function classicOnCluster(config: RetryTopologyConfig, nodes: readonly string[]): ClassicOnCluster | undefined {
  if (nodes.length < 2) return undefined;
  const queues = classicQueuesOf(config);
  return queues.length > 0 ? { queues, nodes: [...nodes] } : undefined;
}

/** Asks the broker for its nodes, then {@link classicOnCluster}; throws when the API does not answer. */
export async function findClassicOnCluster(config: RetryTopologyConfig, reader: ClusterReader): Promise<ClassicOnCluster | undefined> {
  if (classicQueuesOf(config).length === 0) return undefined;
  return classicOnCluster(config, await reader.clusterNodes());
}
