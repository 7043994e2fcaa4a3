/**
 * retry-broker's properties (shared: the nodes that use a retry-broker read its definition with them too): its number fields, the properties it gained after its first release, and its settings read from its (env-resolved) saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { DEFAULT_PUBLISH_LIMITS } from '../../lib/publish/limits';
import { MAX_TIMER_SECONDS, readNumberFields, type NumberField, type NumberValues } from '../../lib/rules/number-fields';
import { stringProp } from './node-red';
import type { PropertyVersions } from './properties';

const MIB = 1024 * 1024;

export const BROKER_NUMBERS = {
  port: { label: 'port', fallback: 5672, min: 1, max: 65535, integer: true },
  heartbeat: { label: 'heartbeat', fallback: 30, min: 0, max: 65535, integer: true, unit: 's' },
  reconnectMax: { label: 'maximum reconnect delay', fallback: 5, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
  bufferMessages: { label: 'publish buffer (messages)', fallback: DEFAULT_PUBLISH_LIMITS.maxMessages, min: 1, integer: true },
  bufferMiB: { label: 'publish buffer (MiB)', fallback: DEFAULT_PUBLISH_LIMITS.maxBytes / MIB, min: 0.001, unit: 'MiB' },
} as const satisfies Record<string, NumberField>;

export const BROKER_VERSIONS: PropertyVersions = {
  version: 3,
  // A field without its type is text (`${VAR}` text included), as before the env type existed.
  added: { bufferMessages: { since: 2 }, bufferMiB: { since: 2 }, urlType: { since: 3, value: 'str' }, hostType: { since: 3, value: 'str' }, managementUrlType: { since: 3, value: 'str' } },
};

export interface BrokerProperties {
  /** The node's name ('' for none). */
  name: string;
  /** The broker URL(s) ('' for none: the host fields). */
  url: string;
  host: string;
  vhost: string;
  /** TLS for the host fields: asked for, or a tls-config node selected (a URL says it itself: amqps://). */
  tls: boolean;
  /** The tls-config node's id ('' for none). */
  tlsConfig: string;
  /** The management API's URL ('' for the default one). */
  managementUrl: string;
  /** Its numbers; a bad one reads as its fallback and is one of `problems`. */
  numbers: NumberValues<typeof BROKER_NUMBERS>;
  /** What is wrong with its numbers. */
  problems: string[];
}

export function brokerProperties(def: Record<string, unknown>): BrokerProperties {
  const { values, problems } = readNumberFields(def, BROKER_NUMBERS);
  const tlsConfig = stringProp(def.tlsConfig);
  return {
    name: stringProp(def.name),
    url: stringProp(def.url),
    host: stringProp(def.host, '127.0.0.1'),
    vhost: stringProp(def.vhost, '/'),
    tls: def.tls === true || tlsConfig !== '',
    tlsConfig,
    managementUrl: stringProp(def.managementUrl),
    numbers: values,
    problems,
  };
}
