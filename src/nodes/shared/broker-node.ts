/** The broker config node's shape as other nodes see it, its lookup, and the settings a broker definition gives. */
import type { BrokerConnection, BrokerSettings } from '../../lib/connection';
import type { QueueWatch } from '../../lib/parking';
import type { ManagementApi } from '../../lib/topology';
import { readNumberFields } from '../../lib/rules';
import { BROKER_NUMBERS } from './broker-properties';
import { findConfig } from './config-lookup';
import { stringProp, type Node, type NodeAPI, type NodeStatus } from './node-red';
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
  const numbers = readNumberFields(def, BROKER_NUMBERS);
  const settings: BrokerSettings = {
    url: stringProp(def.url),
    host: stringProp(def.host, '127.0.0.1'),
    port: numbers.values.port,
    vhost: stringProp(def.vhost, '/'),
    // A TLS configuration means TLS for the host fields; a URL says it itself (amqps://).
    tls: def.tls === true || stringProp(def.tlsConfig) !== '',
    username: credentials?.user,
    password: credentials?.password,
    heartbeat: numbers.values.heartbeat,
  };
  return { settings, problems: numbers.problems };
}
