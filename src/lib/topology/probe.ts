/**
 * A one-off look at a broker's topology on a connection of its own, e.g. for the editor's "check
 * topology" button: connect (to the first node of a cluster that answers), check every object
 * passively, disconnect. Never declares anything.
 */
import * as amqp from 'amqplib';
import type { ConnectTarget } from '../connection';
import { ManagementApi } from './management-api';
import { chooseManagementApi } from './management-url';
import { planTopology, type RetryTopologyConfig } from './plan';
import { inspectTopology, type ChannelRunner, type TopologyInspection } from './apply';
import { closeChannel } from '../amqp';
import { findClassicOnCluster, type ClassicOnCluster } from './queue-type';

export interface ProbeOptions {
  /** Socket options, e.g. TLS (certificates) from a tls-config node. */
  socketOptions?: Record<string, unknown>;
  /**
   * The broker's management API URL as configured: empty for none (existence checks only); an unset
   * `${VAR}` tries the API at the broker's host (chooseManagementApi).
   */
  managementUrl: string;
  timeoutMs?: number;
}

async function connectFirst(targets: ConnectTarget[], options: ProbeOptions): Promise<{ model: amqp.ChannelModel; target: ConnectTarget }> {
  const failures: string[] = [];
  for (const target of targets) {
    try {
      return { model: await amqp.connect(target.url, { timeout: options.timeoutMs ?? 10_000, ...options.socketOptions }), target };
    } catch (err) {
      failures.push(`${target.display}: ${(err as Error).message}`);
    }
  }
  throw new Error(failures.length > 0 ? `cannot connect: ${failures.join('; ')}` : 'no broker to connect to');
}

/** The broker's version as it said it when the connection opened, when it did. */
function versionOf(model: amqp.ChannelModel): string | undefined {
  const version: unknown = model.connection.serverProperties.version;
  return typeof version === 'string' ? version : undefined;
}

/**
 * `version`: the broker's, so the editor offers broker-native delayed retry only where it can run;
 * `classicOnCluster`: the classic main and parking queues when the broker is a cluster of several nodes
 * (the management API's `/api/nodes`; not said when the API does not answer).
 */
export async function probeTopology(targets: ConnectTarget[], topology: RetryTopologyConfig, options: ProbeOptions): Promise<TopologyInspection & { broker: string; version?: string; classicOnCluster?: ClassicOnCluster }> {
  const { model, target } = await connectFirst(targets, options);
  model.on('error', () => undefined);
  const run: ChannelRunner = async (work) => {
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    try {
      return await work(channel);
    } finally {
      // Closed already by the broker after a 404 or 406.
      await closeChannel(channel);
    }
  };
  try {
    const management = chooseManagementApi(options.managementUrl, target);
    const reader = management.kind === 'none' ? undefined : ManagementApi.forTarget(management.url, target, management.kind === 'default');
    const version = versionOf(model);
    const inspection = await inspectTopology(run, planTopology(topology), reader);
    const cluster = reader ? await findClassicOnCluster(topology, reader).catch(() => undefined) : undefined;
    return { broker: target.display, ...(version !== undefined ? { version } : {}), ...inspection, ...(cluster ? { classicOnCluster: cluster } : {}) };
  } finally {
    await model.close().catch(() => undefined);
  }
}
