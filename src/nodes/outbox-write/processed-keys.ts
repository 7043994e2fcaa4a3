/**
 * The deduplication keys an outbox write records as processed in its transaction (*Processed key*):
 * the consumed message's claimed key (`msg.amqp.dedupe`), or for a batch msg every item's
 * (`msg.amqp.items[i].dedupe`) — one write commits the whole batch's effect, so it records every
 * item's key with it, and a crash before the acks cannot repeat any of them. Pure.
 */
import type { DedupeKey } from '../../lib/dedupe';
import { batchOf } from '../shared/batch-msg';
import type { NodeMessage } from '../shared/node-red';

function claimedKey(amqp: unknown): DedupeKey | undefined {
  const claimed = amqp !== null && typeof amqp === 'object' ? (amqp as { dedupe?: { scope?: unknown; key?: unknown } }).dedupe : undefined;
  if (!claimed || typeof claimed.scope !== 'string' || typeof claimed.key !== 'string') return undefined;
  return { scope: claimed.scope, key: claimed.key };
}

/** The keys the msg's consumer claimed: none when it did not deduplicate (or the msg was built by hand). */
export function processedKeys(msg: NodeMessage): DedupeKey[] {
  const batch = batchOf(msg);
  const keys = batch ? batch.items.map(claimedKey) : [claimedKey(msg.amqp)];
  return keys.filter((key): key is DedupeKey => key !== undefined);
}
