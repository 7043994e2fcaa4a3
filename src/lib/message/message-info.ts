/**
 * Message building in one place: which AMQP properties a consumed message shows on `msg.amqp`,
 * which ones the package carries over when it republishes, and which ones a flow may set on a
 * publish. Pure.
 */
import type { ConsumeMessage, MessageProperties, Options } from 'amqplib';
import { plainHeaderValue } from '../amqp';
import { originalRoute, type RetryInfo } from './attempts';

/** What a delivery becomes on `msg.amqp`: plain data only. */
export interface AmqpInfo {
  /** Names the delivery for a settle; opaque. */
  deliveryId: string;
  /** Names the retry configuration whose consumers settle it (in Node-RED: the retry-config node's id). */
  config: string;
  queue: string;
  exchange: string;
  routingKey: string;
  redelivered: boolean;
  deliveryTag: number;
  consumerTag: string;
  /** AMQP properties that were set, headers excluded. */
  properties: Record<string, unknown>;
  headers: Record<string, unknown>;
  /**
   * The delivery's retry info, the same object as `msg.retry`: kept here too because core nodes
   * write `msg.retry` (the http request node sets it to 0 on every response) and never `msg.amqp`.
   */
  retry: RetryInfo;
  /** With deduplication: the record this delivery claimed (a write in the same database may complete it in its own transaction). */
  dedupe?: { scope: string; key: string };
}

export interface DeliveredMessage {
  payload: unknown;
  amqp: AmqpInfo;
  retry: RetryInfo;
  /** The W3C trace context it carries (`msg.traceparent`, `msg.tracestate`), when it carries one. */
  traceparent?: string;
  tracestate?: string;
}

/** Every property of a consumed message, headers excluded: what `msg.amqp.properties` shows. */
export const CONSUMED_PROPERTY_KEYS = [
  'contentType',
  'contentEncoding',
  'deliveryMode',
  'priority',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'timestamp',
  'type',
  'userId',
  'appId',
  'clusterId',
] as const satisfies ReadonlyArray<keyof MessageProperties>;

/**
 * The properties worth carrying over when the package republishes a message. Left out on purpose:
 * `expiration` (a parked message waits for a human, it must not expire) and `userId` (the broker
 * rejects a publish whose user-id is not the connection's user).
 */
export const COPIED_PROPERTY_KEYS = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'messageId',
  'timestamp',
  'type',
  'appId',
  'priority',
] as const satisfies ReadonlyArray<keyof MessageProperties>;

/** What a flow may set on `msg.properties` for retry-publish. */
export const PUBLISH_PROPERTY_KEYS = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'messageId',
  'headers',
  'expiration',
  'priority',
  'type',
  'appId',
  'timestamp',
  'persistent',
] as const satisfies ReadonlyArray<keyof Options.Publish>;

/** The listed keys of an object that are neither undefined nor null. */
export function pickDefined<T extends object>(source: T, keys: ReadonlyArray<keyof T>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value: unknown = source[key];
    if (value !== undefined && value !== null) out[String(key)] = value;
  }
  return out;
}

/**
 * `pickDefined(p, CONSUMED_PROPERTY_KEYS)` written out: on every delivery, where a loop over the
 * keys (one keyed load per name) cost about ten times as much as these named loads. The unit tests
 * hold it to the list.
 */
export function consumedProperties(p: MessageProperties): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (p.contentType != null) out.contentType = p.contentType;
  if (p.contentEncoding != null) out.contentEncoding = p.contentEncoding;
  if (p.deliveryMode != null) out.deliveryMode = p.deliveryMode;
  if (p.priority != null) out.priority = p.priority;
  if (p.correlationId != null) out.correlationId = p.correlationId;
  if (p.replyTo != null) out.replyTo = p.replyTo;
  if (p.expiration != null) out.expiration = p.expiration;
  if (p.messageId != null) out.messageId = p.messageId;
  if (p.timestamp != null) out.timestamp = p.timestamp;
  if (p.type != null) out.type = p.type;
  if (p.userId != null) out.userId = p.userId;
  if (p.appId != null) out.appId = p.appId;
  if (p.clusterId != null) out.clusterId = p.clusterId;
  return out;
}

/** The properties of a consumed message that a republished copy keeps. */
export function copiedProperties(p: MessageProperties): Options.Publish {
  return pickDefined(p, COPIED_PROPERTY_KEYS);
}

/**
 * Publish options of a copy the package republishes (retry, park, replay, retry mover): the kept
 * properties with `headers`, always `mandatory` (an unroutable copy is an error, never a silent drop).
 */
export function copyPublishOptions(p: MessageProperties, headers: Record<string, unknown>, persistent: boolean): Options.Publish {
  return Object.assign(copiedProperties(p), { headers, persistent, mandatory: true });
}

/**
 * `config` names the retry configuration (see AmqpInfo), `queue` is the main queue. Exchange and routing key are where the message was first published: a
 * retried message comes back through the retry route, which a flow (msg.topic) must not see.
 * `retry`: the delivery's retry info, carried as `retry` (see AmqpInfo), whose `x-death` records are
 * reused rather than read again.
 */
export function toAmqpInfo(deliveryId: string, config: string, queue: string, message: ConsumeMessage, retry: RetryInfo): AmqpInfo {
  const route = originalRoute(message.properties.headers, queue, message.fields, retry.deaths);
  return {
    deliveryId,
    config,
    queue,
    exchange: route.exchange,
    routingKey: route.routingKey,
    redelivered: message.fields.redelivered,
    deliveryTag: message.fields.deliveryTag,
    consumerTag: message.fields.consumerTag,
    properties: consumedProperties(message.properties),
    // Plain data (no amqplib type wrappers); a republish takes the original headers, never these.
    headers: plainHeaderValue(message.properties.headers ?? {}) as Record<string, unknown>,
    retry,
  };
}
