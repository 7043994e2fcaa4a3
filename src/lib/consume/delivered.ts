/**
 * What the flow gets of a delivery (pure but for the trace it carries): its body decoded by content
 * type, `msg.amqp`, `msg.retry`, the trace context of its headers, and the deduplication key it was
 * admitted under (a held message run again).
 */
import type { ConsumeMessage } from 'amqplib';
import { decodePayload, toAmqpInfo, type DeliveredMessage, type RetryInfo } from '../message';
import { TRACEPARENT_HEADER } from '../trace';
import { carryTrace } from './delivery-spans';
import type { DeliveriesOptions } from './types';

export interface Delivered {
  delivered: DeliveredMessage;
  /** Why the body did not decode, when it did not (the flow gets it raw). */
  error: string | undefined;
}

export function deliveredOf(id: string, message: ConsumeMessage, retry: RetryInfo, options: Pick<DeliveriesOptions, 'configId' | 'mainQueue' | 'decode'>, dedupeKey?: string): Delivered {
  const decoded = decodePayload(message.content, message.properties.contentType as string | undefined, options.decode);
  const delivered: DeliveredMessage = {
    payload: decoded.ok ? decoded.payload : decoded.raw,
    amqp: toAmqpInfo(id, options.configId, options.mainQueue, message, retry),
    retry,
  };
  const headers = message.properties.headers;
  if (headers !== undefined && headers[TRACEPARENT_HEADER] !== undefined) carryTrace(delivered, headers);
  if (dedupeKey !== undefined) delivered.amqp.dedupe = { scope: options.mainQueue, key: dedupeKey };
  return { delivered, error: decoded.ok ? undefined : decoded.error };
}
