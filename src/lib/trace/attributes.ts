/**
 * Span names and attributes as the OpenTelemetry messaging semantic conventions say (RabbitMQ), with
 * the package's own under `rabbitmq_retry.`. Pure.
 */
import type { SpanAttributes } from './tracing';

/** The operations the package records, as `messaging.operation.name`. */
export type MessagingOperation = 'publish' | 'process' | 'batch' | 'settle' | 'retry' | 'park' | 'replay' | 'relay';

/** `messaging.operation.type` of each operation: sends, a consumer's processing (of one delivery, or of a batch in batch mode), its settle. */
const OPERATION_TYPE: Readonly<Record<MessagingOperation, 'send' | 'process' | 'settle'>> = {
  publish: 'send',
  retry: 'send',
  park: 'send',
  replay: 'send',
  relay: 'send',
  process: 'process',
  batch: 'process',
  settle: 'settle',
};

/** The AMQP parts the attributes are read from. */
export interface TracedMessage {
  properties: { messageId?: unknown; correlationId?: unknown };
  content?: { length: number };
}

/** `{operation} {destination}`: the span name the conventions ask for (destination: exchange or queue, `amq.default` for the default exchange). */
export function spanName(operation: MessagingOperation, destination: string): string {
  return `${operation} ${destination === '' ? 'amq.default' : destination}`;
}

/**
 * A send's or a consume's attributes. `destination`: the exchange published to (`''`: the default
 * exchange), or the queue consumed from.
 */
export function messagingAttributes(operation: MessagingOperation, destination: string, routingKey: string | undefined, message?: TracedMessage): SpanAttributes {
  const attributes: SpanAttributes = {
    'messaging.system': 'rabbitmq',
    'messaging.operation.name': operation,
    'messaging.operation.type': OPERATION_TYPE[operation],
    'messaging.destination.name': destination === '' ? 'amq.default' : destination,
  };
  if (routingKey !== undefined && routingKey !== '') attributes['messaging.rabbitmq.destination.routing_key'] = routingKey;
  if (message !== undefined) {
    const { messageId, correlationId } = message.properties;
    if (typeof messageId === 'string') attributes['messaging.message.id'] = messageId;
    if (typeof correlationId === 'string') attributes['messaging.message.conversation_id'] = correlationId;
    if (message.content !== undefined) attributes['messaging.message.body.size'] = message.content.length;
  }
  return attributes;
}
