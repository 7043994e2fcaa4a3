/** The outbox event a msg asks an outbox write to insert beside its statements. */
import { randomUUID } from 'node:crypto';
import { publishOptionsProblem } from '../../lib/amqp';
import { encodePayload } from '../../lib/message';
import { statementsProblem, type OutboxEvent, type OutboxStatement } from '../../lib/outbox';
import { stringProp, type NodeMessage } from '../shared/node-red';
import { publishOptions } from '../shared/publish-options';

/** The node's event settings: whether it writes one, and where it goes unless the msg says. */
export interface EventSettings {
  withEvent: boolean;
  exchange: string;
  routingKey: string;
  persistent: boolean;
}

/** The msg's statements and event; throws what is wrong with them. */
export function writeOf(msg: NodeMessage, settings: EventSettings): { statements: OutboxStatement[]; event: OutboxEvent | undefined } {
  const given = msg.statements === undefined ? [] : Array.isArray(msg.statements) ? msg.statements : [msg.statements];
  const problem = statementsProblem(given);
  if (problem) throw new Error(problem);
  const statements = given as OutboxStatement[];
  const event = settings.withEvent ? eventOf(msg, settings) : undefined;
  if (!event && statements.length === 0) throw new Error('nothing to write: msg.statements is empty and the event is off');
  return { statements, event };
}

function eventOf(msg: NodeMessage, settings: EventSettings): OutboxEvent {
  const id = typeof msg.eventId === 'string' && msg.eventId !== '' ? msg.eventId : randomUUID();
  const eventExchange = settings.exchange !== '' ? settings.exchange : stringProp(msg.exchange);
  if (eventExchange === '') throw new Error('msg.exchange is empty: name the exchange the event is published to');
  const key = settings.routingKey !== '' ? settings.routingKey : stringProp(msg.topic);
  const encoded = encodePayload(msg.payload);
  const options = publishOptions({ mode: 'publish', exchange: eventExchange, routingKey: key, persistent: settings.persistent, contentType: '' }, msg, encoded.contentType, () => id) as Record<string, unknown>;
  const problem = publishOptionsProblem(options);
  if (problem !== undefined) throw new Error(`msg.properties: ${problem}`);
  // The relay sets mandatory and the messageId (the row's id) when it publishes.
  const { headers, ...properties } = options;
  delete properties.mandatory;
  delete properties.messageId;
  const orderKey = typeof msg.orderKey === 'string' && msg.orderKey !== '' ? msg.orderKey : undefined;
  return { id, exchange: eventExchange, routingKey: key, content: encoded.content, headers: (headers as Record<string, unknown> | undefined) ?? {}, properties, orderKey };
}
