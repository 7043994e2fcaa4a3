/**
 * Broker-native delayed retry (RabbitMQ 4.3+) against the TTL retry path, in the package: the same
 * preloaded 1 KB messages, each retried once after the same 200 ms then acked, through
 * - the TTL retry queue with a classic main queue (a dead-letter nack, the broker's DLX and TTL hop),
 * - the TTL retry queue with a quorum main queue (a confirmed copy to the retry queue, then the ack),
 * - broker-native retry (a reject with requeue; the quorum main queue holds the message itself).
 * Only where the broker is 4.3 or later: older ones accept the arguments and ignore them.
 */
import type { ChannelModel } from 'amqplib';
import type { Names } from '../../test/helpers/flows';
import { armProbe, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { loadFlow, unloadFlow } from './nodered';
import { benchBroker, benchConfig, benchConsumer, settleNode, timeoutFor, waitForConsumer, type Ctx } from './scenarios';
import { tab } from '../../test/helpers/flows';

export interface NativeRetryVariant {
  key: 'ttl-classic' | 'ttl-quorum' | 'broker';
  label: string;
  /** The retry-config's fields for it (on top of the bench's: default exchange, 200 ms delay). */
  config: Record<string, unknown>;
  /**
   * Acks per message: 2 where the retry is a confirmed copy then the ack of the original (the final
   * ack is the second); 1 where it is a reject. The run waits for all of them, so it never ends with
   * copies in flight (issue 52, item 8: it unloaded the flow half-way and lost its copies' channel).
   */
  acksPerMessage: 1 | 2;
}

export const NATIVE_RETRY_VARIANTS: readonly NativeRetryVariant[] = [
  { key: 'ttl-classic', label: 'TTL retry queue, classic main queue (dead-letter nack)', config: {}, acksPerMessage: 1 },
  { key: 'ttl-quorum', label: 'TTL retry queue, quorum main queue (confirmed copy, ack)', config: { mainQueueArgs: '{"x-queue-type":"quorum"}' }, acksPerMessage: 2 },
  { key: 'broker', label: 'broker-native delayed retry, quorum main queue (reject)', config: { delayedRetry: 'broker' }, acksPerMessage: 1 },
];

export interface NativeRetryRow {
  label: string;
  msgPerSec: number;
  cpuUsPerMsg: number;
  brokerUsPerMsg: number;
}

/** The broker's version, as it says it when a connection opens. */
export function brokerVersion(model: ChannelModel): string {
  const version: unknown = model.connection.serverProperties.version;
  return typeof version === 'string' ? version : '';
}

/** Why the section does not run on this broker (older than 4.3), or undefined when it does. */
export function nativeRetrySkip(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map((p) => Number.parseInt(p, 10) || 0);
  return major > 4 || (major === 4 && minor >= 3) ? undefined : `broker-native delayed retry needs RabbitMQ 4.3+, the broker is ${version || 'of an unknown version'} (point AMQP_URL at one, e.g. amqp://guest:guest@127.0.0.1:5674)`;
}

function flow(ctx: Ctx, topo: Names, variant: NativeRetryVariant, prefetch: number, wires: string[][]): Array<Record<string, unknown>> {
  return [
    tab(),
    benchBroker(ctx),
    benchConfig(topo, variant.config),
    benchConsumer(wires, prefetch),
    { id: 'route', type: 'bench-route', z: 'flow', outputs: 2, wires: [['ack'], ['retry']] },
    settleNode('ack', 'ack'),
    settleNode('retry', 'retry'),
  ];
}

/** Declares the variant's topology (a consumer in a flow declares it) and stops. */
export async function declareNativeRetry(ctx: Ctx, topo: Names, variant: NativeRetryVariant): Promise<void> {
  await loadFlow(flow(ctx, topo, variant, 1, [[]]));
  try {
    await waitForConsumer(topo.mainQueue);
  } finally {
    await unloadFlow();
  }
}

/** One run: the preloaded messages, each retried once and then acked; wall time and client CPU per message. */
export async function nativeRetryRun(ctx: Ctx, topo: Names, variant: NativeRetryVariant, count: number, prefetch: number): Promise<RunResult> {
  const acks = count * variant.acksPerMessage;
  // The same warm-up for every variant: the first tenth of the messages' deliveries (each is delivered twice).
  const done = armProbe(acks, { warmUp: Math.floor(count * 0.1) });
  await loadFlow(flow(ctx, topo, variant, prefetch, [['route']]));
  try {
    await withTimeout(done, timeoutFor(count), `${variant.key} retry: ${acks} acks, ${variant.acksPerMessage} per message (got ${JSON.stringify(probeCounts())})`);
    return perMessage(probeResult(), variant.acksPerMessage);
  } finally {
    await unloadFlow();
  }
}

/** A run's figures per message where the probe counted `acksPerMessage` acks for each. */
function perMessage(result: RunResult, acksPerMessage: number): RunResult {
  if (acksPerMessage === 1) return result;
  const per = (value: number | undefined): number | undefined => (value === undefined ? undefined : value * acksPerMessage);
  return {
    ...result,
    msgPerSec: result.msgPerSec / acksPerMessage,
    cpuUsPerMsg: result.cpuUsPerMsg * acksPerMessage,
    brokerUsPerMsg: result.brokerUsPerMsg * acksPerMessage,
    settleFramesPerMsg: per(result.settleFramesPerMsg),
    gcUsPerMsg: per(result.gcUsPerMsg),
    mainThreadUsPerMsg: per(result.mainThreadUsPerMsg),
  };
}
