/**
 * node-red-contrib-amqp (abreits, 0.4.x, on amqp-ts): amqp-server, amqp in, amqp out. Its `iotype`
 * is "0" direct, "1" fanout, "2" headers, "3" topic exchange, "4" queue. Every consumer acks on
 * arrival (noAck). node-red-contrib-amqp-ack forks it (amqp-ack.ts). Pure.
 */
import { bool, type Conversion, num, text } from './core';
import type { Mapper } from './mapper';
import { convertBroker, convertConsumer, convertPublisher, type ConsumerFields } from './parts';
import type { FlowNode } from './types';

export const ABREITS = 'node-red-contrib-amqp';
export const ABREITS_TYPES = ['amqp-server', 'amqp in', 'amqp out'] as const;
const EXCHANGE_TYPES = ['direct', 'fanout', 'headers', 'topic'];

export function server(ctx: Conversion, node: FlowNode, pkg: string, extra: string[] = []): void {
  const notes = [...extra];
  if (bool(node.usetls) && node.verifyservercert === false) notes.push('it did not verify the server certificate: select a tls-config that does not either');
  if (bool(node.usetopology)) notes.push('its topology JSON is not converted: the exchanges and queues it declared must exist (the consumers check them)');
  convertBroker(ctx, node, pkg, { host: text(node.host, 'localhost'), port: num(node.port, 5672), vhost: text(node.vhost), tls: bool(node.usetls), heartbeat: num(node.keepalive, 30) }, 'user', notes);
}

/** An `amqp in` node: a queue's consumer, or an exchange's (amqp-ts binds a temporary queue). */
export function consumerIn(ctx: Conversion, node: FlowNode, pkg: string, prefetch: number, acks: ConsumerFields['acks'], notes: string[]): void {
  const ioType = text(node.iotype, '4');
  const name = text(node.ioname);
  if (name === '') return ctx.keep(node, pkg, 'it reads the queue or exchange msg.readFrom names (dynamic topology)');
  if (ioType === '0' || ioType === '2') return ctx.keep(node, pkg, `an exchange consumer on a ${ioType === '0' ? 'direct' : 'headers'} exchange: amqp-ts's binding of its temporary queue has no equivalent; bind a queue and consume it`);
  if (text(node.topic) !== '') notes.push(`msg.topic was '${text(node.topic)}' for every message: it is the routing key now (set it with a change node if the flow needs it)`);
  notes.push('msg.amqpMessage is gone: the message is in msg.amqp (properties, headers, routing key)');
  const queue = ioType === '4' ? name : '';
  convertConsumer(
    ctx,
    node,
    pkg,
    {
      broker: text(node.server),
      exchange: ioType === '4' ? '' : name,
      exchangeType: EXCHANGE_TYPES[Number(ioType)] ?? 'topic',
      queue,
      temporary: false,
      routingKeys: ioType === '3' ? ['#'] : [],
      prefetch,
      acks,
    },
    notes,
  );
}

export function publisherOut(ctx: Conversion, node: FlowNode, pkg: string): void {
  const ioType = text(node.iotype, '0');
  const name = text(node.ioname);
  if (name === '') return ctx.keep(node, pkg, 'no queue or exchange name');
  const toQueue = ioType === '4';
  convertPublisher(
    ctx,
    node,
    pkg,
    { broker: text(node.server), exchange: toQueue ? '' : name, exchangeType: EXCHANGE_TYPES[Number(ioType)] ?? 'topic', routingKey: toQueue ? name : text(node.routingkey), routingKeyType: 'str', msgRoutingKey: false },
    ['msg.options (amqp-ts message options) are read from msg.properties now; an empty routing key still takes msg.topic'],
  );
}

export const abreits: Mapper = {
  package: ABREITS,
  types: ABREITS_TYPES,
  matches: () => true,
  convert(ctx, node) {
    if (node.type === 'amqp-server') return server(ctx, node, ABREITS);
    if (node.type === 'amqp out') return publisherOut(ctx, node, ABREITS);
    return consumerIn(ctx, node, ABREITS, 0, 'on-arrival', []);
  },
};
