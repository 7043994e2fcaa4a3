/** The msg a delivery becomes: what the flow gets, and what a deduplication key expression reads. */
import type { DeliveredMessage } from '../../lib/message';
import type { MsgIds } from './msg-ids';
import type { NodeMessage } from '../shared/node-red';

/**
 * `ids`: the `_msgid` given here (a msg the consumer sends), not by Node-RED's generateId per message.
 * `partition`: the partition's number in a partitioned configuration, on the msg as `msg.amqp.partition`.
 */
export function toMsg(delivered: DeliveredMessage, ids?: MsgIds, partition?: number): NodeMessage {
  const amqp = partition === undefined ? delivered.amqp : { ...delivered.amqp, partition };
  const msg: NodeMessage = { payload: delivered.payload, topic: delivered.amqp.routingKey, amqp, retry: delivered.retry };
  if (ids !== undefined) msg._msgid = ids.next();
  if (delivered.traceparent !== undefined) {
    msg.traceparent = delivered.traceparent;
    if (delivered.tracestate !== undefined) msg.tracestate = delivered.tracestate;
  }
  return msg;
}
