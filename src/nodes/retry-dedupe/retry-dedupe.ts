/**
 * `retry-dedupe` config node: the store of processed message keys (memory, Redis or PostgreSQL:
 * store.ts) and the consumers using it (controller.ts); its dialog in editor.ts.
 */
import { resolveEnvFields } from '../../lib/connection';
import type { DedupeStoreNode } from '../shared/dedupe-node';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { DedupeController } from './controller';
import { dedupeProperties } from './properties';

export = function register(RED: NodeAPI): void {
  function RetryDedupe(this: DedupeStoreNode, saved: NodeDef): void {
    RED.nodes.createNode(this, saved);
    const node = this;
    const def = resolveEnvFields(saved, (name) => RED.util.evaluateNodeProperty(name, 'env', node));
    const controller = new DedupeController(RED, node, dedupeProperties(def));
    node.on('close', (_removed, done) => {
      controller.close().then(done, done);
    });
  }
  RED.nodes.registerType(NODE_TYPE.retryDedupe, RetryDedupe as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
