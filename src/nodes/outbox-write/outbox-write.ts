/**
 * `outbox write`: runs the msg's SQL statements and inserts the event row in ONE PostgreSQL
 * transaction, so the business row and its event are written together or not at all. The relay
 * publishes the event afterwards. A failing statement rolls everything back and is a Catch-able
 * error naming it. With the event off it is a plain transactional SQL node.
 *
 * The composition root: reads the node's properties and its database, table and deduplication store,
 * and hands them to the node's controller (controller.ts).
 */
import { PostgresDedupeStore } from '../../lib/dedupe';
import { findDedupeStore, type DedupeStoreNode } from '../shared/dedupe-node';
import { statusKey, translator } from '../shared/i18n';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { outboxTarget, type OutboxTarget } from '../shared/outbox-node';
import { WriteController } from './controller';
import { outboxWriteProperties } from './properties';

export = function register(RED: NodeAPI): void {
  function OutboxWrite(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const props = outboxWriteProperties(def);
    const target = outboxTarget(RED, props);
    const problems = 'problems' in target ? [...target.problems] : [];
    // Optionally, the consumed message's deduplication key is recorded as processed in the same
    // transaction as the effect: a crash before the ack then cannot repeat the effect.
    const dedupeNode = props.dedupe === '' ? undefined : findDedupeStore(RED, props.dedupe);
    if (props.dedupe !== '') problems.push(...dedupeProblems(dedupeNode, target));
    if (problems.length > 0) {
      node.error(`outbox write not usable: ${problems.join('; ')}`);
      node.status({ fill: 'red', shape: 'ring', text: statusKey('outbox-write.status.invalid') });
      node.on('input', (_msg, _send, done) => done(new Error(`outbox write not usable: ${problems.join('; ')}`)));
      return;
    }
    if ('problems' in target) return;
    new WriteController({ node, t: translator(RED), target, event: props.event, dedupe: dedupeNode });
  }
  RED.nodes.registerType(NODE_TYPE.outboxWrite, OutboxWrite);
};

/** The selected store must be a PostgreSQL store on the write's own database, to share its transaction. */
function dedupeProblems(dedupeNode: DedupeStoreNode | undefined, target: OutboxTarget | { problems: string[] }): string[] {
  if (!dedupeNode?.store) return ['the selected deduplication store does not exist or is not usable'];
  if (!(dedupeNode.store instanceof PostgresDedupeStore) || ('problems' in target ? true : !dedupeNode.store.isIn(target.database))) {
    return ['the deduplication store must be a PostgreSQL store on the same database configuration to share the transaction'];
  }
  return [];
}
