/** The msg a delivery becomes: what the flow gets, and what a deduplication key expression reads. */
import type { DeliveredMessage } from '../../lib/message';
import type { NodeMessage } from '../shared/node-red';

export function toMsg(delivered: DeliveredMessage): NodeMessage {
  const msg: NodeMessage = { payload: delivered.payload, topic: delivered.amqp.routingKey, amqp: delivered.amqp, retry: delivered.retry };
  if (delivered.traceparent !== undefined) {
    msg.traceparent = delivered.traceparent;
    if (delivered.tracestate !== undefined) msg.tracestate = delivered.tracestate;
  }
  return msg;
}
