/**
 * A batch msg: what a retry consumer in batch mode sends — one msg for up to `batch size` deliveries —
 * and what the end nodes (retry-settle, park-publisher) settle item by item. Plain data only, like
 * every msg the consumer sends (Node-RED deep-clones msgs on fan-out): `msg.payload` is the array of
 * the items' payloads, `msg.amqp.items[i]` what a single delivery's msg carries in `msg.amqp` (its
 * delivery id first), with its retry information (`retry`) and trace context. docs/msg.md.
 */
import type { AmqpInfo } from '../../lib/message';
import type { NodeMessage } from './node-red';

/** One item of a batch: the `msg.amqp` of a single delivery (its `retry` included), with its trace context. */
export interface BatchItem extends AmqpInfo {
  traceparent?: string;
  tracestate?: string;
}

/** `msg.amqp` of a batch msg. */
export interface BatchAmqp {
  /** The retry configuration whose consumer delivered the items (the end nodes settle through it). */
  config: string;
  /** The main queue. */
  queue: string;
  /** The batch: its id (opaque, unique per consumer), its size, and how often bisect split it (0: as the consumer built it). */
  batch: { id: string; size: number; split: number };
  /** The items, in the order of `msg.payload`. */
  items: BatchItem[];
}

/** The batch a msg carries, when it is a batch msg (`msg.amqp.items` an array); undefined for a single delivery's msg. */
export function batchOf(msg: NodeMessage): BatchAmqp | undefined {
  const amqp = msg.amqp as { items?: unknown } | undefined;
  return amqp !== null && typeof amqp === 'object' && Array.isArray(amqp.items) ? (amqp as BatchAmqp) : undefined;
}

/** `this msg is a batch of N items`: how an error about a batch msg begins. */
export function aBatchOf(size: number): string {
  return `this msg is a batch of ${size} item${size === 1 ? '' : 's'}`;
}
