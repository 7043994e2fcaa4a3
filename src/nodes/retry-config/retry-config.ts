/**
 * `retry-config` config node: the retry topology (main / retry / parking queues and their arguments)
 * that consumers, publishers and replays share (controller.ts); the admin endpoints of its dialog
 * (check-endpoint.ts, definitions-endpoint.ts) and the dialog itself (editor.ts).
 */
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { registerCheckEndpoint } from './check-endpoint';
import { RetryConfigController } from './controller';
import { registerDefinitionsEndpoint } from './definitions-endpoint';
import { retryConfigProperties } from './properties';

export = function register(RED: NodeAPI): void {
  function RetryConfig(this: RetryConfigNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const controller = new RetryConfigController(RED, this, retryConfigProperties(def));
    this.on('close', (_removed: boolean, done: () => void) => {
      void controller.close().finally(done);
    });
  }
  RED.nodes.registerType(NODE_TYPE.retryConfig, RetryConfig as (this: Node, def: NodeDef) => void);
  registerCheckEndpoint(RED);
  registerDefinitionsEndpoint(RED);
};
