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
}

export const NATIVE_RETRY_VARIANTS: readonly NativeRetryVariant[] = [
  { key: 'ttl-classic', label: 'TTL retry queue, classic main queue (dead-letter nack)', config: {} },
  { key: 'ttl-quorum', label: 'TTL retry queue, quorum main queue (confirmed copy, ack)', config: { mainQueueArgs: '{"x-queue-type":"quorum"}' } },
  { key: 'broker', label: 'broker-native delayed retry, quorum main queue (reject)', config: { delayedRetry: 'broker' } },
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
  const done = armProbe(count);
  await loadFlow(flow(ctx, topo, variant, prefetch, [['route']]));
  try {
    await withTimeout(done, timeoutFor(count), `${variant.key} retry: ${count} final acks (got ${JSON.stringify(probeCounts())})`);
    return probeResult();
  } finally {
    await unloadFlow();
  }
}
