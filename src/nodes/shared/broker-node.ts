/** The broker config node's shape as other nodes see it, its lookup, and the settings a broker definition gives. */
import type { BrokerConnection, BrokerSettings } from '../../lib/connection';
import type { QueueWatch } from '../../lib/parking';
import type { ManagementApi } from '../../lib/topology';
import { brokerProperties, type BrokerProperties } from './broker-properties';
import { findConfig } from './config-lookup';
import type { Node, NodeAPI, NodeStatus } from './node-red';
import { NODE_TYPE } from './node-types';
import type { ConfigUser } from './users';

export interface RetryBrokerNode extends Node {
  connection: BrokerConnection;
  /** Queue depths for every consumer of this broker, one look per tick (no polling storm). */
  queueWatch: QueueWatch;
  /** The broker URL(s) without passwords, for labels and messages. */
  display: string;
  managementApi: ManagementApi | undefined;
  register(user: ConfigUser): void;
  deregister(user: ConfigUser): Promise<void>;
  connectionStatus(): NodeStatus;
}

/** The `retry-broker` node with the given id, or undefined when it is missing or of another type. */
export function findBroker(RED: NodeAPI, id: unknown): RetryBrokerNode | undefined {
  return findConfig<RetryBrokerNode>(RED, NODE_TYPE.retryBroker, id);
}

/**
 * Where a broker definition connects to, with the given credentials (Node-RED keeps them apart);
 * `problems` names the number fields that cannot be used.
 */
export function brokerSettingsOf(def: Record<string, unknown>, credentials: Record<string, string | undefined> | undefined): { settings: BrokerSettings; problems: string[] } {
  return brokerSettingsFrom(brokerProperties(def), credentials);
}

/** brokerSettingsOf() of properties read already (brokerProperties()). */
export function brokerSettingsFrom(props: BrokerProperties, credentials: Record<string, string | undefined> | undefined): { settings: BrokerSettings; problems: string[] } {
  const { url, host, vhost, tls, numbers } = props;
  const settings: BrokerSettings = { url, host, port: numbers.port, vhost, tls, username: credentials?.user, password: credentials?.password, heartbeat: numbers.heartbeat };
  return { settings, problems: props.problems };
}
