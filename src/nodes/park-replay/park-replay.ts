/**
 * `park-replay`: the runbook as a node. Each input replays parked messages of a retry config back to
 * where they were first published (confirmed), peeks at them without removing them, or purges them.
 *
 * The composition root: reads the node's properties and its retry configuration and builds the node's
 * controller (controller.ts); with the type come the parking browser's admin endpoints.
 */
import { translator } from '../shared/i18n';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { parkReplaySettings } from './properties';
import { findRetryConfig } from '../shared/retry-config-node';
import { ParkReplayController } from './controller';
import { registerEditEndpoint } from './edit-endpoint';
import { registerParkingEndpoints } from './parking-endpoints';
import { registerReplayJobEndpoints } from './replay-job-endpoints';

export = function register(RED: NodeAPI): void {
  function ParkReplay(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    new ParkReplayController(RED, this, findRetryConfig(RED, def.config), parkReplaySettings(def), translator(RED));
  }
  RED.nodes.registerType(NODE_TYPE.parkReplay, ParkReplay);
  registerReplayJobEndpoints(RED, registerParkingEndpoints(RED));
  registerEditEndpoint(RED);
};
