/** A delivery's deduplication key: its messageId by default, or a value the flow's expression gives. Pure. */
import type { DeliveredMessage } from '../message';
import type { DedupeKeyResult } from './gate';

/** The delivery's messageId; missing when it has none (or an empty one). */
export function messageIdKey(delivered: Pick<DeliveredMessage, 'amqp'>): DedupeKeyResult {
  const id = delivered.amqp.properties.messageId;
  return typeof id === 'string' && id !== '' ? { key: id } : { missing: true };
}

/**
 * A value (of a msg property or an expression) as a key: a non-empty string is one; nothing (undefined,
 * null, an empty string) is missing; anything else is a problem naming what it is. `source` names where
 * the value came from, e.g. `msg.payload.paymentId`.
 */
export function keyFromValue(value: unknown, source: string): DedupeKeyResult {
  if (value === undefined || value === null || value === '') return { missing: true };
  if (typeof value === 'string') return { key: value };
  const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  const shown = typeof value === 'number' || typeof value === 'boolean' ? ` (${String(value)})` : '';
  return { problem: `${source} is ${kind}${shown}, not a string: make it one (in JSONata, $string(...))` };
}
