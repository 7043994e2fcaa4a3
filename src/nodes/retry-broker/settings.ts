/**
 * What a broker node's definition asks for: the addresses to connect to, the socket options of its
 * TLS configuration, its management API and the connection's limits; or why it cannot be used (said
 * once in the log: the node still starts, and its users say so too).
 */
import { isUnresolvedEnv, resolveConnectTargets, type BrokerConnectionOptions, type ConnectTarget } from '../../lib/connection';
import { readNumberFields } from '../../lib/rules';
import { ManagementApi, chooseManagementApi } from '../../lib/topology';
import { brokerSettingsOf } from '../shared/broker-node';
import { stringProp, type Node, type NodeAPI } from '../shared/node-red';
import { BROKER_NUMBERS } from '../shared/broker-properties';
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
function connectTargets(RED: NodeAPI, node: Node, def: Record<string, unknown>): { targets: ConnectTarget[]; socketOptions?: Record<string, unknown>; configError?: string } {
  let targets: ConnectTarget[] = [];
  try {
    const settings = brokerSettingsOf(def, node.credentials);
    if (settings.problems.length > 0) throw new Error(settings.problems.join('; '));
    targets = resolveConnectTargets(settings.settings);
    return { targets, socketOptions: tlsSocketOptions(RED, stringProp(def.tlsConfig), targets) };
  } catch (err) {
    return { targets, configError: (err as Error).message };
  }
}

/** Reads the (env-resolved) definition; logs what the user should know about it. */
export function brokerSetup(RED: NodeAPI, node: Node, def: Record<string, unknown>): BrokerSetup {
  const { targets, socketOptions, configError: targetError } = connectTargets(RED, node, def);
  let configError = targetError;
  const url = stringProp(def.url);
  if (url !== '' && isUnresolvedEnv(url) && !configError) {
    node.warn(`broker URL ${url}: environment variable not set, using ${targets.map((t) => t.display).join(', ')}`);
  }
  const display = configError ? 'invalid broker configuration' : targets.map((t) => t.display).join(', ');
  const first = targets[0];
  const management = chooseManagementApi(stringProp(def.managementUrl), first);
  let managementApi: ManagementApi | undefined;
  try {
    managementApi = first && management.kind !== 'none' ? ManagementApi.forTarget(management.url, first, management.kind === 'default') : undefined;
  } catch (err) {
    configError ??= (err as Error).message;
  }
  // An example imported as it is: not a problem, said once in the log (not the debug sidebar).
  if (management.kind === 'default' && !configError) node.log(management.note);
  if (configError) node.error(`broker configuration not usable: ${configError}`);
  const numbers = readNumberFields(def, BROKER_NUMBERS);
  const connection: BrokerConnectionOptions = {
    targets,
    configError,
    socketOptions,
    connectionName: `node-red ${stringProp(def.name) || node.id}`,
    reconnect: { initialMs: 1000, maxMs: numbers.values.reconnectMax * 1000 },
    publishLimits: { maxMessages: numbers.values.bufferMessages, maxBytes: numbers.values.bufferMiB * MIB },
  };
  return { targets, configError, display, managementApi, connection };
}
