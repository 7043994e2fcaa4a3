/**
 * retry-broker's properties (shared: the nodes that use a retry-broker read its definition with them too): its number fields and the properties it gained after its first release. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { DEFAULT_PUBLISH_LIMITS } from '../../lib/publish/limits';
import { MAX_TIMER_SECONDS, type NumberField } from '../../lib/rules/number-fields';
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
