/**
 * `park-publisher`: moves the message msg refers to into the parking queue and sends the msg on with
 * `msg.park`. The composition root: its controller (`controller.ts`) does the work.
 */
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { ParkPublisherController } from './controller';
import { parkPublisherProperties } from './properties';

export = function register(RED: NodeAPI): void {
  function ParkPublisher(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    new ParkPublisherController(RED, this, parkPublisherProperties(def));
  }
  RED.nodes.registerType(NODE_TYPE.parkPublisher, ParkPublisher);
};
