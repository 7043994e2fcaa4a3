/**
 * What a consumer session builds from its options — its deduplication gate and its deliveries (these
 * own a delivery from arrival to settlement) — and what it checks before it consumes. The session
 * keeps the lifecycle.
 */
import type { Channel } from 'amqplib';
import { DedupeGate, DedupeStoreError } from '../dedupe';
import { messages } from '../observe';
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
    claimWindow: dedupe.claimWindow,
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

/** Reports an error once per distinct text; `again()` lets the next one through, whatever it is. */
export class ErrorOnce {
  private last = '';
  constructor(private readonly write: (text: string) => void) {}

  report(text: string): void {
    if (text === this.last) return;
    this.last = text;
    this.write(text);
  }

  again(): void {
    this.last = '';
  }
}

/** A failed setup (or a lost channel) waiting for its re-check: that re-check does not announce itself (its status stays). */
export function failedSetup(state: SessionState): boolean {
  return state.phase === 'topology-error' || state.phase === 'store-down' || state.phase === 'channel-lost';
}

/**
 * Why a consumer's channel closed under it: the broker's close (its code and text, from the channel's
 * `error` event), else with its connection. Never without a cause: a closed channel returns every
 * unsettled delivery to the queue, and a user must be able to tell why (issue 52, item 3).
 */
export function channelClosedWhy(brokerSaid: string | undefined): string {
  return brokerSaid === undefined ? 'consumer channel closed (with its connection, or by this client)' : `consumer channel closed by the broker (${brokerSaid})`;
}

/**
 * Calls `closed` once the consumer's channel closes, with why ({@link channelClosedWhy}) and whether
 * the broker closed it: amqplib emits the broker's close (its code and text) as `error` before `close`.
 */
export function whenChannelCloses(channel: Channel, closed: (why: string, byBroker: boolean) => void): void {
  let brokerSaid: string | undefined;
  channel.on('error', (err: Error) => (brokerSaid = err.message));
  channel.on('close', () => closed(channelClosedWhy(brokerSaid), brokerSaid !== undefined));
}

/**
 * What a lost channel says: how many deliveries the flow held (the broker redelivers them) and how many
 * copies were in flight (their originals come back too, unless the copy was confirmed before).
 */
export function lostChannelText(why: string, unsettled: number, copying: number): string {
  const copies = copying > 0 ? `; ${copying} ${copying === 1 ? 'copy' : 'copies'} (retry or park) in flight: their originals come back too` : '';
  return `${why}: ${messages(unsettled, 'unsettled')} will be redelivered by the broker${copies}`;
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
