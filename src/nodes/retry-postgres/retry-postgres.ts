/**
 * `retry-postgres` config node: one PostgreSQL database (a pool), shared by the deduplication store
 * and the outbox nodes: its settings from the definition (settings.ts), the pool and its users
 * (controller.ts), its status (status.ts), its dialog (editor.ts).
 */
import { resolveEnvFields } from '../../lib/connection';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import type { RetryPostgresNode } from '../shared/postgres-node';
import { PostgresController } from './controller';
import { postgresProperties } from './properties';
import { postgresSettings } from './settings';

export = function register(RED: NodeAPI): void {
  function RetryPostgres(this: RetryPostgresNode, saved: NodeDef): void {
    RED.nodes.createNode(this, saved);
    const node = this;
    const props = postgresProperties(resolveEnvFields(saved, (name) => RED.util.evaluateNodeProperty(name, 'env', node)));
    const { settings, problems } = postgresSettings(RED, node, props);
    const controller = new PostgresController(RED, node, props.name || undefined, settings, problems, props.url);
    node.on('close', (_removed, done) => {
      controller.close().then(done, done);
    });
  }
  RED.nodes.registerType(NODE_TYPE.retryPostgres, RetryPostgres as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
