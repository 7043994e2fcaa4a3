/**
 * retry-publish's properties: the values of its mode, and its settings read from its saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { stringProp } from '../shared/node-red';

export const PUBLISH_MODES = ['publish', 'reply'] as const;

/** How a partitioned publish reads a msg's key: a msg property (`msg.key` by default) or a JSONata expression. */
export interface PartitionKeyProperties {
  /** `msg`, `jsonata`, or what the flow saved (read as a msg property). */
  keyType: string;
  /** The property's path or the expression ('key' for a msg property left empty). */
  key: string;
}

export interface PublishProperties {
  /** The retry-broker node's id ('' for none). */
  broker: string;
  settings: { mode: (typeof PUBLISH_MODES)[number]; exchange: string; routingKey: string; persistent: boolean; contentType: string; keepIds: boolean };
  /** The queue it makes sure of (e.g. the reply queue), once per connection ('' for none). */
  declareQueue: string;
  /** The partitioned retry configuration's id ('' for none: not partitioned). */
  partitions: string;
  partitionKey: PartitionKeyProperties;
}

export function publishProperties(def: Record<string, unknown>): PublishProperties {
  const keyType = stringProp(def.keyType, 'msg');
  return {
    broker: stringProp(def.broker),
    settings: {
      mode: def.mode === 'reply' ? 'reply' : 'publish',
      exchange: stringProp(def.exchange),
      routingKey: stringProp(def.routingKey),
      persistent: def.persistent !== false,
      contentType: stringProp(def.contentType),
      keepIds: def.keepIds === true,
    },
    declareQueue: stringProp(def.declareQueue),
    partitions: stringProp(def.partitions),
    partitionKey: { keyType, key: stringProp(def.key) || (keyType === 'msg' ? 'key' : '') },
  };
}
