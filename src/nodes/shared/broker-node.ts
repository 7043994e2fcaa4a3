/** The broker config node's shape as other nodes see it, and its status texts. */
import { resolveEnvFields, type BrokerConnection, type BrokerSettings, type ConnectionState } from '../../lib/connection';
import type { QueueWatch } from '../../lib/parking';
import type { ManagementApi } from '../../lib/topology';
import { readNumberFields } from '../../lib/rules';
import { NUMBER_FIELDS } from './properties';
import type { PublishBufferState } from '../../lib/publish';
import { statusKey, type Translate } from './i18n';
import { stringProp, type Node, type NodeAPI, type NodeStatus } from './node-red';

/**
 * A broker dialog's values (saved or not) with its env fields and `${NAME}` resolved the way the
 * deployed broker node reads them: its flow's env, else the process's (the admin endpoints' view).
 */
export function dialogBrokerValues(RED: NodeAPI, broker: Record<string, unknown>): Record<string, unknown> {
  const brokerId = stringProp(broker.id);
  const deployed = brokerId ? RED.nodes.getNode(brokerId) : null;
  return resolveEnvFields(broker, (name) => RED.util.evaluateNodeProperty(name, 'env', deployed));
}

export interface BrokerUser {
  id: string;
  status(status: NodeStatus): void;
}

export interface RetryBrokerNode extends Node {
  connection: BrokerConnection;
  /** Queue depths for every consumer of this broker, one look per tick (no polling storm). */
  queueWatch: QueueWatch;
  /** The broker URL(s) without passwords, for labels and messages. */
  display: string;
  managementApi: ManagementApi | undefined;
  register(user: BrokerUser): void;
  deregister(user: BrokerUser): Promise<void>;
  connectionStatus(): NodeStatus;
}

/** The connection's status; under back-pressure it says who blocks and how full the publish buffer is. */
export function connectionStatus(state: ConnectionState, buffer: PublishBufferState | undefined, t: Translate): NodeStatus {
  if (!buffer || (buffer.blockedBy === undefined && buffer.messages === 0)) return phaseStatus(state, t, statusKey);
  // Followed by the buffer's fill: one text, translated here.
  const status = phaseStatus(state, t, t);
  const fill = buffer.messages > 0 ? t('retry-broker.status.buffer', { messages: buffer.messages, max: buffer.limits.maxMessages }) : '';
  if (state.phase === 'connected' && buffer.blockedBy !== undefined) {
    return { fill: 'yellow', shape: 'dot', text: t('retry-broker.status.blocked', { reason: buffer.blockedBy }) + fill };
  }
  return { fill: status.fill === 'green' ? 'yellow' : status.fill, shape: status.shape, text: `${status.text ?? ''}${fill}` };
}

/** `key` gives a parameterless status: as a catalog key the editor translates, or translated here. */
function phaseStatus(state: ConnectionState, t: Translate, key: (key: string) => string): NodeStatus {
  switch (state.phase) {
    case 'connected':
      return state.error ? { fill: 'yellow', shape: 'dot', text: state.error } : { fill: 'green', shape: 'dot', text: key('retry-broker.status.connected') };
    case 'invalid':
      return { fill: 'red', shape: 'ring', text: state.error ?? t('retry-broker.status.invalid') };
    case 'connecting':
      return { fill: 'yellow', shape: 'ring', text: key('retry-broker.status.connecting') };
    case 'waiting': {
      // Rounded: a wait of 1.01 s reads 1 s, not 2; never 0 s.
      const seconds = Math.max(1, Math.round((state.retryInMs ?? 0) / 1000));
      return { fill: 'red', shape: 'ring', text: t('retry-broker.status.waiting', { error: state.error ?? t('retry-broker.status.disconnected'), seconds }) };
    }
    default:
      return { fill: 'grey', shape: 'ring', text: key('retry-broker.status.disconnected') };
  }
}

/** The `retry-broker` node with the given id, or undefined when it is missing or of another type. */
export function findBroker(RED: NodeAPI, id: unknown): RetryBrokerNode | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  const node = RED.nodes.getNode(id);
  return node && node.type === 'retry-broker' ? (node as RetryBrokerNode) : undefined;
}

/**
 * Where a broker definition connects to, with the given credentials (Node-RED keeps them apart);
 * `problems` names the number fields that cannot be used.
 */
export function brokerSettingsOf(def: Record<string, unknown>, credentials: Record<string, string | undefined> | undefined): { settings: BrokerSettings; problems: string[] } {
  const numbers = readNumberFields(def, NUMBER_FIELDS['retry-broker']);
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
