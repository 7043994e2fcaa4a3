/**
 * park-publisher's properties read from its saved definition: the reason a parked message carries when its msg has no
 * `msg.error`. The runtime reads its flow with it. Pure: the editor can run it too.
 */
import { stringProp } from '../shared/node-red';

export interface ParkPublisherProperties {
  /** The parking reason unless msg.error says one ('' for none). */
  reason: string;
}

export function parkPublisherProperties(def: Record<string, unknown>): ParkPublisherProperties {
  return { reason: stringProp(def.reason) };
}
