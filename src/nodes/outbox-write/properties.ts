/**
 * outbox-write's properties read from its saved definition: its outbox table, the deduplication store it records keys
 * in, and the event it inserts. The runtime reads its flow with them. Pure: the editor can run it too.
 */
import { stringProp } from '../shared/node-red';
import { outboxTableProperties, type OutboxTableProperties } from '../shared/properties';

export interface OutboxWriteProperties extends OutboxTableProperties {
  /** The retry-dedupe node whose processed keys it records in the same transaction ('' for none). */
  dedupe: string;
  /** The event row it inserts (off: a plain transactional SQL node). */
  event: { withEvent: boolean; exchange: string; routingKey: string; persistent: boolean };
}

export function outboxWriteProperties(def: Record<string, unknown>): OutboxWriteProperties {
  return {
    ...outboxTableProperties(def),
    dedupe: stringProp(def.dedupe),
    event: { withEvent: def.event !== false, exchange: stringProp(def.exchange), routingKey: stringProp(def.routingKey), persistent: def.persistent !== false },
  };
}
