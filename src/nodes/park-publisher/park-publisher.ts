/**
 * `park-publisher`: moves the message msg refers to into the parking queue — a confirmed, mandatory
 * publish of the original body, properties and headers plus failure headers, and only then the ack —
 * and sends the msg on with `msg.park`. See shared/settle-node.ts.
 */
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { settleNode } from '../shared/settle-node';

export = function register(RED: NodeAPI): void {
  function ParkPublisher(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    settleNode(RED, this, def, 'park');
  }
  RED.nodes.registerType('park-publisher', ParkPublisher);
};
