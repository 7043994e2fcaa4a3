/**
 * `retry-settle`: the end of a wire that settles the message msg refers to — ack (done) or retry
 * (dead-letter to the retry queue; parks once attempts are exhausted). The composition root: its
 * controller (`controller.ts`) does the work.
 */
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { RetrySettleController } from './controller';

export = function register(RED: NodeAPI): void {
  function RetrySettle(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    new RetrySettleController(RED, this, def);
  }
  RED.nodes.registerType(NODE_TYPE.retrySettle, RetrySettle);
};
