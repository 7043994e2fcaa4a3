/**
 * The deduplication keys an outbox write records as processed in its transaction (its *Processed key*
 * option): a single delivery's `msg.amqp.dedupe`; for a batch msg, every item's — except the items the
 * flow already said will not be acked (a `msg.outcomes` entry other than `'ack'`, or a `msg.errors`
 * entry): the write did not do their work, and a key recorded as processed would make their replay a
 * duplicate. Such an item's key is recorded (or released) by its settle, as without the option. A batch
 * whose `msg.outcomes` / `msg.errors` cannot be read is refused before anything is written: the settle
 * would refuse it too. Pure.
 */
import type { DedupeKey } from '../../lib/dedupe';
import { batchDirectives, BatchInputError, type ItemDirective } from '../shared/batch-outcomes';
import { batchOf } from '../shared/batch-msg';
import type { NodeMessage } from '../shared/node-red';

/** A `dedupe` record as the consumer wrote it, when it is one. */
function keyOf(dedupe: unknown): DedupeKey | undefined {
  const { scope, key } = (dedupe ?? {}) as { scope?: unknown; key?: unknown };
  return typeof scope === 'string' && typeof key === 'string' ? { scope, key } : undefined;
}

/** Whether the flow's answer for an item leaves it to be acked (the write did its work). */
function acked(directive: ItemDirective | undefined): boolean {
  if (directive === undefined || directive.from === 'node') return true;
  return directive.from === 'outcome' && directive.action === 'ack';
}

/** The keys to record as processed with the write, or why the batch msg cannot be written. */
export function processedKeys(msg: NodeMessage): DedupeKey[] | BatchInputError {
  const batch = batchOf(msg);
  if (batch === undefined) {
    const one = keyOf((msg.amqp as { dedupe?: unknown } | undefined)?.dedupe);
    return one === undefined ? [] : [one];
  }
  const directives = batchDirectives(batch.items.length, msg.outcomes, msg.errors);
  if (directives instanceof BatchInputError) return directives;
  const keys: DedupeKey[] = [];
  batch.items.forEach((item, index) => {
    const key = acked(directives[index]) ? keyOf(item.dedupe) : undefined;
    if (key !== undefined) keys.push(key);
  });
  return keys;
}
