/**
 * Every node type's property tables by type, for the converter (which writes nodes of several types):
 * their number fields and the versions of their properties, each from its node's folder.
 */
import type { NumberField } from '../lib/rules/number-fields';
import { RELAY_NUMBERS } from '../nodes/outbox-relay/properties';
import { REPLAY_NUMBERS, REPLAY_VERSIONS } from '../nodes/park-replay/properties';
import { CONSOLE_NUMBERS } from '../nodes/retry-console/properties';
import { CONSUMER_NUMBERS, CONSUMER_VERSIONS } from '../nodes/retry-consumer/properties';
import { DEDUPE_NUMBERS } from '../nodes/retry-dedupe/properties';
import { POSTGRES_NUMBERS } from '../nodes/retry-postgres/properties';
import { BROKER_NUMBERS, BROKER_VERSIONS } from '../nodes/shared/broker-properties';
import { CONFIG_NUMBERS, CONFIG_VERSIONS } from '../nodes/shared/config-properties';
import { NODE_TYPE } from '../nodes/shared/node-types';
import type { PropertyVersions } from '../nodes/shared/properties';

/** Every number property of every node type that has one. */
export const NUMBER_FIELDS = {
  [NODE_TYPE.retryBroker]: BROKER_NUMBERS,
  [NODE_TYPE.retryConfig]: CONFIG_NUMBERS,
  [NODE_TYPE.retryConsumer]: CONSUMER_NUMBERS,
  [NODE_TYPE.parkReplay]: REPLAY_NUMBERS,
  [NODE_TYPE.retryConsole]: CONSOLE_NUMBERS,
  [NODE_TYPE.retryDedupe]: DEDUPE_NUMBERS,
  [NODE_TYPE.outboxRelay]: RELAY_NUMBERS,
  [NODE_TYPE.retryPostgres]: POSTGRES_NUMBERS,
} as const satisfies Record<string, Record<string, NumberField>>;

/** The node types whose properties grew after their first release. */
export const PROPERTY_VERSIONS: Record<string, PropertyVersions> = {
  [NODE_TYPE.retryBroker]: BROKER_VERSIONS,
  [NODE_TYPE.parkReplay]: REPLAY_VERSIONS,
  [NODE_TYPE.retryConfig]: CONFIG_VERSIONS,
  [NODE_TYPE.retryConsumer]: CONSUMER_VERSIONS,
};
