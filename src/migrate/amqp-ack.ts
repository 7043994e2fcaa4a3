/**
 * node-red-contrib-amqp-ack (1.x), abreits' package with acks: its amqp-server adds prefetch (manual
 * acks by `amqp ack` nodes, or acks after a timeout), its `amqp ack` node acks or nacks (requeue) the
 * msg's delivery. Told apart from abreits' by that node or those server fields. Pure.
 */
import { bool, type Conversion, num, text } from './core';
import type { Mapper } from './mapper';
import { ABREITS_TYPES, consumerIn, publisherOut, server } from './abreits';
import { retrySettle } from './templates';
import { NODE_TYPE } from '../nodes/shared/node-types';
import type { FlowNode } from './types';

export const AMQP_ACK = 'node-red-contrib-amqp-ack';

function isAmqpAck(nodes: readonly FlowNode[]): boolean {
  return nodes.some((n) => n.type === 'amqp ack' || (n.type === 'amqp-server' && ('prefetch' in n || 'prefetchack' in n || 'useca' in n)));
}

/** `amqp ack`: ack, or nack with requeue (a retry now). It passed the msg on: its targets now take it from the same nodes. */
function ackNode(ctx: Conversion, node: FlowNode): void {
  const action = bool(node.nack) ? 'retry' : 'ack';
  const onward = (node.wires ?? []).flat();
  ctx.replace(node.id, retrySettle({ id: node.id, z: node.z, x: node.x, y: node.y, name: text(node.name) }, action, action === 'retry' ? 'nack' : ''));
  const notes = action === 'retry' ? ['its nack requeued the message: it is retried through the retry queue now, and parked after the last attempt'] : [];
  if (onward.length > 0) {
    ctx.moveInputs(node.id, [node.id, ...onward]);
    notes.push('it passed the msg on after settling: the nodes it fed are wired from its inputs now (they run alongside the settle)');
  }
  ctx.entry(node, AMQP_ACK, 'converted', [NODE_TYPE.retrySettle], notes);
}

function consumer(ctx: Conversion, node: FlowNode): void {
  const srv = ctx.original(text(node.server));
  const manual = bool(srv?.prefetch);
  const timed = manual && bool(srv?.prefetchack);
  const notes = timed ? [`it acked each message ${num(srv?.prefetchvalueack, 10)} ms after it arrived: acked on arrival now`] : [];
  consumerIn(ctx, node, AMQP_ACK, manual ? num(srv?.prefetchvalue, 1) : 0, manual && !timed ? 'ack-nodes' : 'on-arrival', notes);
}

export const amqpAck: Mapper = {
  package: AMQP_ACK,
  types: [...ABREITS_TYPES, 'amqp ack'],
  matches: isAmqpAck,
  convert(ctx, node) {
    if (node.type === 'amqp-server') return server(ctx, node, AMQP_ACK, bool(node.useca) ? ['it used a CA file: select a tls-config with it'] : []);
    if (node.type === 'amqp out') return publisherOut(ctx, node, AMQP_ACK);
    if (node.type === 'amqp ack') return ackNode(ctx, node);
    return consumer(ctx, node);
  },
};
