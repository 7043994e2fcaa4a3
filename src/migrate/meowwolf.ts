/**
 * @meowwolf/node-red-contrib-amqp (2.x): amqp-broker, amqp-in, amqp-in-manual-ack, amqp-out.
 * @frankvdb/node-red-contrib-amqp, its fork, adds fields read here too (queue type and arguments,
 * confirms): frankvdb.ts. Pure.
 */
import { bool, type Conversion, jsonObject, num, text } from './core';
import type { Mapper } from './mapper';
import { convertBroker, convertConsumer, convertPublisher } from './parts';
import type { FlowNode } from './types';

export const MEOWWOLF = '@meowwolf/node-red-contrib-amqp';
export const MEOWWOLF_TYPES = ['amqp-broker', 'amqp-in', 'amqp-in-manual-ack', 'amqp-out'] as const;

function broker(ctx: Conversion, node: FlowNode, pkg: string): void {
  const notes = bool(node.credsFromSettings) ? ['its credentials came from settings.js (MW_CONTRIB_AMQP_USERNAME / MW_CONTRIB_AMQP_PASSWORD): enter them in the retry-broker'] : [];
  convertBroker(ctx, node, pkg, { host: text(node.host, 'localhost'), port: num(node.port, 5672), vhost: text(node.vhost), tls: bool(node.tls) }, 'username', notes);
}

/** Queue arguments the old node declared its queue with (FrankVDB: a queue type and arguments). */
export type QueueArgsOf = (node: FlowNode) => Record<string, unknown> | undefined;

function consumer(ctx: Conversion, node: FlowNode, pkg: string, queueArgsOf: QueueArgsOf): void {
  const exchangeType = text(node.exchangeType, 'topic');
  if (exchangeType === 'headers') return ctx.keep(node, pkg, 'a headers exchange binding (binding arguments) has no equivalent in retry-config');
  const notes: string[] = [];
  if (text(node.queueName) !== '' && !bool(node.queueDurable)) notes.push(`queue '${text(node.queueName)}' was not durable: created durable when missing`);
  const manual = node.type === 'amqp-in-manual-ack' && !bool(node.noAck);
  convertConsumer(
    ctx,
    node,
    pkg,
    {
      broker: text(node.broker),
      exchange: text(node.exchangeName),
      exchangeType,
      exchangeDurable: node.exchangeDurable === undefined || bool(node.exchangeDurable),
      queue: text(node.queueName),
      temporary: bool(node.queueExclusive) || bool(node.queueAutoDelete),
      routingKeys: text(node.exchangeRoutingKey).split(',').map((k) => k.trim()).filter((k) => k !== ''),
      prefetch: num(node.prefetch, 0),
      ...(queueArgsOf(node) ? { queueArgs: queueArgsOf(node) } : {}),
      acks: manual ? 'msg-manualAck' : 'on-arrival',
    },
    notes,
  );
}

function publisher(ctx: Conversion, node: FlowNode, pkg: string, extraNotes: (node: FlowNode) => string[]): void {
  if (num(node.outputs, 0) > 0) return ctx.keep(node, pkg, 'an RPC request (a reply queue per message, the reply on its output) has no equivalent');
  if (text(node.exchangeName) === '') return ctx.keep(node, pkg, 'it answers RPC requests on msg.properties.replyTo: use a retry-publish in reply mode after a retry-consumer');
  const keyType = text(node.exchangeRoutingKeyType, 'str');
  const key = text(node.exchangeRoutingKey);
  if (keyType === 'str' && key.includes(',')) return ctx.keep(node, pkg, `it publishes each message once per routing key (${key}): use one retry-publish per key`);
  const properties = jsonObject(node.amqpProperties) ?? {};
  if (typeof properties.headers === 'object' && properties.headers !== null && Object.keys(properties.headers).length === 0) delete properties.headers;
  const exchangeType = text(node.exchangeType, 'topic');
  const fanout = ['fanout', 'headers'].includes(exchangeType);
  convertPublisher(
    ctx,
    node,
    pkg,
    { broker: text(node.broker), exchange: text(node.exchangeName), exchangeType, exchangeDurable: node.exchangeDurable === undefined || bool(node.exchangeDurable), routingKey: fanout ? '' : key, routingKeyType: fanout ? 'str' : keyType, msgRoutingKey: !fanout, properties },
    extraNotes(node),
  );
}

/** The mapper of MeowWolf's nodes, or (with its extras) of FrankVDB's fork. */
export function meowwolfFamily(pkg: string, matches: Mapper['matches'], queueArgsOf: QueueArgsOf = () => undefined, publisherNotes: (node: FlowNode) => string[] = () => []): Mapper {
  return {
    package: pkg,
    types: MEOWWOLF_TYPES,
    matches,
    convert(ctx, node) {
      if (node.type === 'amqp-broker') return broker(ctx, node, pkg);
      if (node.type === 'amqp-out') return publisher(ctx, node, pkg, publisherNotes);
      return consumer(ctx, node, pkg, queueArgsOf);
    },
  };
}

export const meowwolf: Mapper = meowwolfFamily(MEOWWOLF, () => true);

