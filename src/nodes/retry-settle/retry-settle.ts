/**
 * `retry-settle`: the end of a wire that settles the message msg refers to — ack (done) or retry
 * (dead-letter to the retry queue; parks once attempts are exhausted). See shared/settle-node.ts.
 */
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { settleNode } from '../shared/settle-node';

export = function register(RED: NodeAPI): void {
  function RetrySettle(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    settleNode(RED, this, def, def.action === 'retry' ? 'retry' : 'ack');
  }
  RED.nodes.registerType('retry-settle', RetrySettle);
};
