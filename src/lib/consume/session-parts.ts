/**
 * What a consumer session builds from its options — its deduplication gate and its deliveries (these
 * own a delivery from arrival to settlement) — and what it checks before it consumes. The session
 * keeps the lifecycle.
 */
import { DedupeGate, DedupeStoreError } from '../dedupe';
import { QueueWatch } from '../parking';
import { decisionPolicy, Settler, type OrderedHold } from '../settle';
import { applyTopology, retryQueueNames, TopologyError, type QueueArguments, type RetryTopologyConfig, type TopologyPlan } from '../topology';
import { Deliveries } from './deliveries';
import { ConsumerDepths } from './depths';
import { DeliveryRegistry } from './registry';
import type { ConsumerSessionOptions, SessionState, SessionStats } from './types';

/** The depths of the consumer's queues, looked at through the connection's shared watch or one of its own. */
export function consumerDepths(options: ConsumerSessionOptions): ConsumerDepths {
  const { topology, queueWatch } = options;
  // Broker-native delayed retry has no retry queue: a retry waits in the main queue.
  const queues = { main: topology.mainQueue, retry: topology.delayedRetry === 'broker' ? [] : retryQueueNames(topology), parking: topology.parkingQueue };
  if (queueWatch) return new ConsumerDepths(queueWatch, queues);
  const own = new QueueWatch(options.connection);
  return new ConsumerDepths(own, queues, own);
}

/** The main queue's arguments as planned (its type: a broker-native retry's main queue is quorum without being told). */
export function mainQueueArguments(plan: TopologyPlan, topology: Pick<RetryTopologyConfig, 'mainQueue' | 'mainQueueArguments'>): QueueArguments {
  const main = plan.queues.find((q) => q.role === 'main' && q.name === topology.mainQueue);
  return main?.arguments ?? topology.mainQueueArguments;
}

/** The gate deliveries pass with deduplication on, its events told to the session (`on`). */
export function dedupeGate(options: ConsumerSessionOptions, on: { down(why: string): void; up(): void; warning(text: string): void }): DedupeGate | undefined {
  const { dedupe } = options;
  if (!dedupe) return undefined;
  const gate = new DedupeGate({
    store: dedupe.store,
    scope: options.topology.mainQueue,
    // A claim must outlive the flow's settle timeout, or a duplicate could be taken while the first is still in the flow.
    leaseMs: Math.max(dedupe.leaseMs, options.settleTimeoutMs > 0 ? options.settleTimeoutMs + 30_000 : 0),
    retentionMs: dedupe.retentionMs,
    storeDown: dedupe.storeDown,
  });
  return gate.on('down', (why) => on.down(why)).on('up', () => on.up()).on('warning', (text) => on.warning(text));
}

export function sessionDeliveries(options: ConsumerSessionOptions, hold: OrderedHold | undefined, gate: DedupeGate | undefined): Deliveries {
  const { topology, dedupe } = options;
  return new Deliveries(new DeliveryRegistry(), {
    configId: options.configId ?? '',
    mainQueue: topology.mainQueue,
    policy: decisionPolicy(topology, hold !== undefined),
    settler: new Settler(options.copies),
    hold,
    settleTimeoutMs: options.settleTimeoutMs,
    decode: options.decode,
    invalidBody: options.invalidBody,
    requeuePauseMs: options.parkFailurePauseMs ?? 5000,
    metrics: options.metrics,
    tracer: options.tracer,
    dedupe:
      gate && dedupe
        ? { gate, keyOf: dedupe.keyOf, noKey: dedupe.noKey, maxKeyBytes: dedupe.store.maxKeyBytes, scope: topology.mainQueue }
        : undefined,
  });
}

/**
 * Checks (or declares) the topology, then checks (or creates the table of) the deduplication store:
 * never consume without them. Says whether the queues' arguments went uncompared.
 */
export async function prepareConsuming(options: ConsumerSessionOptions, plan: TopologyPlan, warn: (text: string) => void): Promise<boolean> {
  const { connection, topology, dedupe } = options;
  const result = await applyTopology((work) => connection.withThrowawayChannel(work), plan, topology.mode, options.definitionReader);
  for (const warning of result.warnings) warn(warning);
  await dedupe?.store.prepare().catch((err: unknown) => {
    throw err instanceof DedupeStoreError ? err : new DedupeStoreError(`deduplication store ${dedupe.store.description}: ${(err as Error).message}`, 'other');
  });
  return result.argumentsUnchecked === true;
}

/** What a consumer cancelled by the broker (basic.cancel) says: the causes, and that it consumes again. */
export function brokerCancelText(mainQueue: string): string {
  return (
    `the broker cancelled the consumer of queue '${mainQueue}' (the queue was deleted, its leader moved, or on RabbitMQ 4.3+ a quorum queue's consumer timeout: ` +
    'a message held longer than the timeout); its unsettled messages go back to the queue; consuming again'
  );
}

/** The state a failed setup leaves the session in, with what it says (`detail`). */
export function setupFailure(err: unknown, mainQueue: string): SessionState & { detail: string } {
  if (err instanceof TopologyError) return { phase: 'topology-error', detail: err.message, objects: err.objects };
  if (err instanceof DedupeStoreError) return { phase: 'store-down', detail: err.message, storeProblem: err.problem };
  return { phase: 'channel-lost', detail: `cannot consume '${mainQueue}': ${(err as Error).message}` };
}

/** A session's numbers: its deliveries' counts, the parking queue's depth when known, what the rate limit holds when any. */
export function sessionStats(deliveries: Deliveries, parkingDepth: number | undefined, argumentsUnchecked: boolean, rateLimited: number): SessionStats {
  const stats: SessionStats = { inFlight: deliveries.inFlight, waiting: deliveries.waiting, ...deliveries.counters };
  if (parkingDepth !== undefined) stats.parkingDepth = parkingDepth;
  if (argumentsUnchecked) stats.argumentsUnchecked = true;
  if (rateLimited) stats.rateLimited = rateLimited;
  return stats;
}
