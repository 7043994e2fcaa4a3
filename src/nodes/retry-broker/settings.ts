/**
 * What a broker node's definition asks for: the addresses to connect to, the socket options of its
 * TLS configuration, its management API and the connection's limits; or why it cannot be used (said
 * once in the log: the node still starts, and its users say so too).
 */
import { isUnresolvedEnv, resolveConnectTargets, type BrokerConnectionOptions, type ConnectTarget } from '../../lib/connection';
import { ManagementApi, chooseManagementApi } from '../../lib/topology';
import { brokerSettingsFrom } from '../shared/broker-node';
import type { Node, NodeAPI } from '../shared/node-red';
import type { BrokerProperties } from '../shared/broker-properties';
import { tlsSocketOptions } from '../shared/tls-config';

const MIB = 1024 * 1024;

export interface BrokerSetup {
  targets: ConnectTarget[];
  /** Why the configuration cannot be used; undefined when it can. */
  configError: string | undefined;
  /** The broker URL(s) without passwords, for labels and messages. */
  display: string;
  managementApi: ManagementApi | undefined;
  connection: BrokerConnectionOptions;
}

/** The broker's connection targets and TLS socket options, or why the settings cannot be used. */
function connectTargets(RED: NodeAPI, node: Node, props: BrokerProperties): { targets: ConnectTarget[]; socketOptions?: Record<string, unknown>; configError?: string } {
  let targets: ConnectTarget[] = [];
  try {
    const settings = brokerSettingsFrom(props, node.credentials);
    if (settings.problems.length > 0) throw new Error(settings.problems.join('; '));
    targets = resolveConnectTargets(settings.settings);
    return { targets, socketOptions: tlsSocketOptions(RED, props.tlsConfig, targets) };
  } catch (err) {
    return { targets, configError: (err as Error).message };
  }
}

/** Sets up from the node's properties; logs what the user should know about them. */
export function brokerSetup(RED: NodeAPI, node: Node, props: BrokerProperties): BrokerSetup {
  const { targets, socketOptions, configError: targetError } = connectTargets(RED, node, props);
  let configError = targetError;
  const { url } = props;
  if (url !== '' && isUnresolvedEnv(url) && !configError) {
    node.warn(`broker URL ${url}: environment variable not set, using ${targets.map((t) => t.display).join(', ')}`);
  }
  const display = configError ? 'invalid broker configuration' : targets.map((t) => t.display).join(', ');
  const first = targets[0];
  const management = chooseManagementApi(props.managementUrl, first);
  let managementApi: ManagementApi | undefined;
  try {
    managementApi = first && management.kind !== 'none' ? ManagementApi.forTarget(management.url, first, management.kind === 'default') : undefined;
  } catch (err) {
    configError ??= (err as Error).message;
  }
  // An example imported as it is: not a problem, said once in the log (not the debug sidebar).
  if (management.kind === 'default' && !configError) node.log(management.note);
  if (configError) node.error(`broker configuration not usable: ${configError}`);
  const numbers = props.numbers;
  const connection: BrokerConnectionOptions = {
    targets,
    configError,
    socketOptions,
    connectionName: `node-red ${props.name || node.id}`,
    reconnect: { initialMs: 1000, maxMs: numbers.reconnectMax * 1000 },
    publishLimits: { maxMessages: numbers.bufferMessages, maxBytes: numbers.bufferMiB * MIB },
  };
  return { targets, configError, display, managementApi, connection };
}
