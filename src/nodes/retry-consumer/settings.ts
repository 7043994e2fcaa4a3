/**
 * What a retry-consumer node reads from its properties — its numbers, its retry configuration, its
 * deduplication store and key — and the options of the session it runs per queue (the main queue, or
 * each partition queue). A node with problems does not start.
 */
import { batchPrefetch, type ConsumerSessionOptions } from '../../lib/consume';
import type { DecodeMode } from '../../lib/message';
import { readNumberFields } from '../../lib/rules';
import { isPartitioned, type RetryTopologyConfig } from '../../lib/topology';
import { openTelemetryTracer } from '../../lib/trace';
import type { RetryBrokerNode } from '../shared/broker-node';
import { findDedupeStore, keyReader, type DedupeStoreNode } from '../shared/dedupe-node';
import { translator } from '../shared/i18n';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { findConfig } from '../shared/config-lookup';
import { NODE_TYPE } from '../shared/node-types';
import { CONSUMER_NUMBERS, DECODE_MODES, restartMaxProblem } from './properties';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { toMsg } from './delivered-msg';

type Values = ReturnType<typeof readValues>['values'];

/** A consumer that can start: what it reads, checked. */
export interface ConsumerSettings {
  def: NodeDef;
  values: Values;
  config: RetryConfigNode & { topology: RetryTopologyConfig; broker: RetryBrokerNode };
  dedupeNode: DedupeStoreNode | undefined;
  keyOf: ReturnType<typeof keyReader> | undefined;
  /** Ordered mode (or a partitioned configuration: ordered per partition). */
  ordered: boolean;
  /** Batch mode (issue 51): up to `size` deliveries per msg, a partial batch sent after `waitMs`. */
  batch: { size: number; waitMs: number } | undefined;
}

function readValues(def: NodeDef, ordered: boolean, batch: boolean) {
  const fields = CONSUMER_NUMBERS;
  return readNumberFields(def, {
    // Ordered processing forces prefetch 1, so its field is not read then.
    ...(ordered ? {} : { prefetch: fields.prefetch }),
    ...(ordered ? { orderedPause: fields.orderedPause } : {}),
    settleTimeout: fields.settleTimeout,
    parkingWatch: fields.parkingWatch,
    statsEvery: fields.statsEvery,
    circuitActivation: fields.circuitActivation,
    circuitTripPercent: fields.circuitTripPercent,
    circuitWindow: fields.circuitWindow,
    circuitRestart: fields.circuitRestart,
    circuitRestartMax: fields.circuitRestartMax,
    circuitProbes: fields.circuitProbes,
    rateLimit: fields.rateLimit,
    ...(batch ? { batchSize: fields.batchSize, batchWait: fields.batchWait } : {}),
  });
}

/** The consumer's settings, or why it cannot start (`problems`, in the order the status shows them). */
export function consumerSettings(RED: NodeAPI, node: Node, def: NodeDef): ConsumerSettings | { problems: string[] } {
  const mode = def.mode === 'ordered';
  const batch = def.batch === true;
  const { values, problems } = readValues(def, mode, batch);
  const restartMax = restartMaxProblem(values.circuitRestart, values.circuitRestartMax);
  if (restartMax !== undefined) problems.push(restartMax);
  const config = findConfig<RetryConfigNode>(RED, NODE_TYPE.retryConfig, def.config);
  if (!config) problems.unshift('no retry configuration selected');
  else if (!config.topology || !config.broker) problems.unshift(config.problems.join('; ') || 'retry configuration has no broker');
  // Deduplication: an optional store config node, and how a delivery's key is read.
  let dedupeNode: DedupeStoreNode | undefined;
  let keyOf: ReturnType<typeof keyReader> | undefined;
  if (typeof def.dedupe === 'string' && def.dedupe !== '') {
    dedupeNode = findDedupeStore(RED, def.dedupe);
    if (!dedupeNode) problems.push('the selected deduplication store does not exist (deleted or not deployed)');
    else if (!dedupeNode.store) problems.push(`deduplication store: ${dedupeNode.problems.join('; ') || 'not usable'}`);
    try {
      keyOf = keyReader(RED, node, def, toMsg);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  // Batch mode keeps no per-key order: a retried item would let the later items of its key overtake it.
  if (batch && (mode || (config?.topology !== undefined && isPartitioned(config.topology)))) problems.push(translator(RED)('retry-consumer.errors.batchOrdered'));
  if (!config || !config.topology || !config.broker || problems.length > 0) return { problems };
  const batchMode = batch ? { size: values.batchSize ?? 500, waitMs: values.batchWait ?? 200 } : undefined;
  return { def, values, config: config as ConsumerSettings['config'], dedupeNode, keyOf, ordered: mode, batch: batchMode };
}

/** The prefetch of a consumer that is not ordered: the configured one, or in batch mode room for two batches (at most 65535). */
function parallelPrefetch(settings: ConsumerSettings): number {
  const prefetch = settings.values.prefetch ?? 10;
  return settings.batch ? batchPrefetch(prefetch, settings.batch.size) : prefetch;
}

/** The options of the session of one queue (`part`: the main queue's topology, or a partition's). */
export function sessionOptions(settings: ConsumerSettings, part: RetryTopologyConfig, partitioned: boolean, metrics: ConsumerSessionOptions['metrics']): ConsumerSessionOptions {
  const { def, values, config, dedupeNode, keyOf } = settings;
  const { broker } = config;
  const ordered = settings.ordered || partitioned;
  return {
    connection: broker.connection,
    // A copy refused for the buffer's bound would send its original back at the same attempt: copies wait.
    copies: broker.connection.publisher('settle', { heldByBroker: true }),
    configId: config.id,
    topology: part,
    // Ordered processing needs one message at a time: nothing may overtake a failed one.
    prefetch: ordered ? 1 : parallelPrefetch(settings),
    ordered: ordered ? { pauseMs: (values.orderedPause ?? 5) * 1000 } : undefined,
    parkingWatchMs: values.parkingWatch * 1000,
    queueWatch: broker.queueWatch,
    settleTimeoutMs: values.settleTimeout * 1000,
    decode: DECODE_MODES.find((m): m is DecodeMode => m === def.decode) ?? 'auto',
    invalidBody: def.invalidBody === 'error' ? 'error' : 'park',
    definitionReader: broker.managementApi,
    metrics,
    // The kill switch and the rate limit (issue 26): off unless asked for.
    circuit:
      def.circuit === true
        ? {
            activation: values.circuitActivation,
            tripRatio: values.circuitTripPercent / 100,
            windowMs: values.circuitWindow * 1000,
            restartMs: values.circuitRestart * 1000,
            restartMaxMs: values.circuitRestartMax * 1000,
            probes: values.circuitProbes,
          }
        : undefined,
    rateLimit: values.rateLimit,
    // Spans only when an OpenTelemetry SDK is registered when the consumer starts (nothing is loaded otherwise).
    tracer: openTelemetryTracer(),
    dedupe:
      dedupeNode?.store && keyOf
        ? {
            store: dedupeNode.store,
            keyOf,
            noKey: def.dedupeNoKey === 'park' ? 'park' : 'process',
            storeDown: def.dedupeStoreDown === 'process' ? 'process' : 'pause',
            leaseMs: dedupeNode.leaseMs,
            retentionMs: dedupeNode.retentionMs,
            // Batch mode: a batch's keys claimed in one statement, not one per turn of deliveries.
            claimWindow: settings.batch,
          }
        : undefined,
  };
}
