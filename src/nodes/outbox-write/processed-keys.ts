/**
 * The deduplication keys an outbox write records as processed in its transaction (*Processed key*):
 * the consumed message's claimed key (`msg.amqp.dedupe`), or for a batch msg the key of every item
 * whose effect the write commits (`msg.amqp.items[i].dedupe`) — so a crash between the batch's write
 * and its acks repeats none of them. An item the flow already failed (named in `msg.errors`, or given
 * a `msg.outcomes` entry other than `ack`) is left out: it is retried or parked, and a key recorded
 * as processed would take its next delivery for a duplicate. Unusable per-item answers (the settle
 * will refuse them and settle nothing): no key. Pure.
 */
import type { DedupeKey } from '../../lib/dedupe';
import { batchOf } from '../shared/batch-msg';
import { batchDirectives, BatchInputError, type ItemDirective } from '../shared/batch-outcomes';
import type { NodeMessage } from '../shared/node-red';

function claimedKey(amqp: unknown): DedupeKey | undefined {
  const claimed = amqp !== null && typeof amqp === 'object' ? (amqp as { dedupe?: { scope?: unknown; key?: unknown } }).dedupe : undefined;
  if (!claimed || typeof claimed.scope !== 'string' || typeof claimed.key !== 'string') return undefined;
  return { scope: claimed.scope, key: claimed.key };
}

/** An item whose effect the write commits: the flow named no failure for it. */
const succeeded = (directive: ItemDirective): boolean => directive.from === 'node' || (directive.from === 'outcome' && directive.action === 'ack');

/** The keys the msg's consumer claimed for what the write commits: none when it did not deduplicate (or the msg was built by hand). */
export function processedKeys(msg: NodeMessage): DedupeKey[] {
  const batch = batchOf(msg);
  if (!batch) return [claimedKey(msg.amqp)].filter((key): key is DedupeKey => key !== undefined);
  const directives = batchDirectives(batch.items.length, msg.outcomes, msg.errors);
  if (directives instanceof BatchInputError) return [];
  return batch.items.filter((_, i) => succeeded(directives[i] as ItemDirective)).map(claimedKey).filter((key): key is DedupeKey => key !== undefined);
}
