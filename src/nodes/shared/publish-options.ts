/** Where a publish goes and with which AMQP properties, from the node's settings and the msg. Pure. */
import type { Options } from 'amqplib';
import { pickDefined, PUBLISH_PROPERTY_KEYS } from '../../lib/message';
import { cleanTracestate, isTraceparent, newTraceparent, setTrace, traceOf, type TraceHeaders } from '../../lib/trace';
import { aBatchOf, batchOf } from './batch-msg';
import { record, type NodeMessage } from './node-red';

export interface PublishSettings {
  mode: 'publish' | 'reply';
  exchange: string;
  /** Empty: msg.topic. */
  routingKey: string;
  persistent: boolean;
  /** Empty: implied by the payload (object → application/json, string → text/plain). */
  contentType: string;
  /**
   * Keep the consumed message's ids (msg.amqp): its messageId, correlationId, contentType and its own
   * headers (not the broker's `x-` ones nor this package's retry / park bookkeeping), unless
   * msg.properties sets them. A worker that forwards a message then keeps its identity, so a
   * deduplicating consumer downstream sees the same messageId.
   */
  keepIds?: boolean;
}

/** Headers the broker or this package wrote about a delivery's past: not carried to a new message. */
function ownHeader(name: string): boolean {
  return !/^(x-|retry-|park-)/i.test(name);
}

/** The consumed message's ids and its own headers, as publish options. */
function consumedIds(msg: NodeMessage): Record<string, unknown> {
  const amqp = record(msg.amqp);
  const properties = record(amqp.properties);
  const kept = pickDefined(properties, ['messageId', 'correlationId', 'contentType']);
  const headers = Object.fromEntries(Object.entries(record(amqp.headers)).filter(([name]) => ownHeader(name)));
  if (Object.keys(headers).length > 0) kept.headers = headers;
  return kept;
}

/** The consumed message's properties, for a reply. */
function consumedProperties(msg: NodeMessage): Record<string, unknown> {
  return record(record(msg.amqp).properties);
}

/**
 * The trace context a publish carries: `msg.traceparent` (with `msg.tracestate`), else one the headers
 * have already (`msg.properties.headers`, or the consumed message's with keepIds), else a new trace.
 */
export function publishTrace(msg: NodeMessage, headers: Record<string, unknown> | undefined, newTrace: () => string = newTraceparent): TraceHeaders {
  if (isTraceparent(msg.traceparent)) {
    const tracestate = cleanTracestate(msg.tracestate);
    return tracestate === undefined ? { traceparent: msg.traceparent } : { traceparent: msg.traceparent, tracestate };
  }
  return traceOf(headers) ?? { traceparent: newTrace() };
}

/**
 * A batch msg (retry consumer in batch mode) has no one consumed message to reply to or keep the ids
 * of: each item has its own (`msg.amqp.items[i].properties`).
 */
function refuseBatch(msg: NodeMessage, what: string, instead: string): void {
  const batch = batchOf(msg);
  if (batch !== undefined) throw new Error(`${what}: ${aBatchOf(batch.items.length)}, each with its own ${instead}`);
}

export function publishTarget(settings: PublishSettings, msg: NodeMessage): { exchange: string; routingKey: string } {
  if (settings.mode === 'reply') {
    refuseBatch(msg, 'reply', 'replyTo (msg.amqp.items[i].properties.replyTo): reply with one msg per item');
    const replyTo = consumedProperties(msg).replyTo;
    if (typeof replyTo !== 'string' || replyTo === '') {
      throw new Error('reply: msg.amqp.properties.replyTo is missing, so there is nobody to answer');
    }
    return { exchange: '', routingKey: replyTo };
  }
  const routingKey = settings.routingKey || (typeof msg.topic === 'string' ? msg.topic : '');
  if (settings.exchange === '' && routingKey === '') {
    throw new Error('publish: no routing key (set one on the node or in msg.topic); on the default exchange it names the queue');
  }
  return { exchange: settings.exchange, routingKey };
}

export function publishOptions(
  settings: PublishSettings,
  msg: NodeMessage,
  impliedContentType: string | undefined,
  newId: () => string,
  now: () => number = Date.now,
  newTrace: () => string = newTraceparent,
): Options.Publish {
  if (settings.keepIds === true) refuseBatch(msg, 'keep the consumed ids', 'ids: publish one msg per item to keep them, or turn the option off');
  const given = record(msg.properties);
  const options: Record<string, unknown> = Object.assign({ persistent: settings.persistent }, settings.keepIds ? consumedIds(msg) : {}, pickDefined(given, PUBLISH_PROPERTY_KEYS));
  if (settings.mode === 'reply') {
    const correlationId = consumedProperties(msg).correlationId;
    if (correlationId !== undefined) options.correlationId = correlationId;
  }
  options.contentType ??= settings.contentType || impliedContentType;
  if (options.contentType === undefined) delete options.contentType;
  // A message id makes idempotent consumers possible, a timestamp (AMQP: seconds) makes its age
  // known to a max-age rule: every publish gets both.
  options.messageId ??= newId();
  options.timestamp ??= Math.floor(now() / 1000);
  // Every publish carries a trace context (W3C traceparent): the msg's, or a new trace's.
  // (Headers that are not an object are left as they are, for the caller's check to name.)
  if (options.headers === undefined || (typeof options.headers === 'object' && options.headers !== null && !Array.isArray(options.headers))) {
    const headers = Object.assign({}, record(options.headers));
    options.headers = setTrace(headers, publishTrace(msg, headers, newTrace));
  }
  options.mandatory = true;
  return options;
}
