/**
 * The editor's composition root (resources/editor.js, window.RabbitmqRetry): every node type's
 * dialog and what it adds to the editor, and `registerType(type, definition)`, which each node's
 * .html calls in the inline script the build wrote into it (scripts/build-editor.mjs). It sits above
 * everything it wires: the nodes' dialogs (src/nodes/<type>/editor.ts), the flow converter's action
 * (src/migrate) and the shared toolkit (src/editor), which imports none of them.
 */
import { i18n, type Translate } from './editor/index';
import type { EditorRED, NodeDefinition } from './editor/red';
import { migrateAction } from './migrate/editor-action';
import { NODE_TYPE, type NodeType } from './nodes/shared/node-types';
import { outboxRelay } from './nodes/outbox-relay/editor';
import { outboxWrite } from './nodes/outbox-write/editor';
import { parkPublisher } from './nodes/park-publisher/editor';
import { parkReplay } from './nodes/park-replay/editor';
import { parkingBrowser } from './nodes/park-replay/editor-parking-browser';
import { retryBroker } from './nodes/retry-broker/editor';
import { retryConfig } from './nodes/retry-config/editor';
import { retryConsole } from './nodes/retry-console/editor';
import { retryConsumer } from './nodes/retry-consumer/editor';
import { retryDedupe } from './nodes/retry-dedupe/editor';
import { retryHealth } from './nodes/retry-health/editor';
import { retryPostgres } from './nodes/retry-postgres/editor';
import { retryPublish } from './nodes/retry-publish/editor';
import { retrySettle } from './nodes/retry-settle/editor';

export * from './editor/index';

declare const RED: EditorRED;

/**
 * Every node type's dialog, by type (the compiler says when a type has none): its definition for
 * `RED.nodes.registerType`, a pure function of the type's translator (nothing runs in the editor
 * until Node-RED calls its functions), so the build can read it too (scripts/build-editor.mjs writes
 * its static part into each node's .html).
 */
export const DIALOGS: Record<string, (t: Translate) => NodeDefinition> = {
  [NODE_TYPE.retryBroker]: retryBroker,
  [NODE_TYPE.retryConfig]: retryConfig,
  [NODE_TYPE.retryConsumer]: retryConsumer,
  [NODE_TYPE.retrySettle]: retrySettle,
  [NODE_TYPE.parkPublisher]: parkPublisher,
  [NODE_TYPE.retryPublish]: retryPublish,
  [NODE_TYPE.parkReplay]: parkReplay,
  [NODE_TYPE.retryDedupe]: retryDedupe,
  [NODE_TYPE.retryPostgres]: retryPostgres,
  [NODE_TYPE.outboxWrite]: outboxWrite,
  [NODE_TYPE.outboxRelay]: outboxRelay,
  [NODE_TYPE.retryHealth]: retryHealth,
  [NODE_TYPE.retryConsole]: retryConsole,
} satisfies Record<NodeType, (t: Translate) => NodeDefinition>;

/**
 * What a node type adds to the editor besides its dialog, once registered: park-replay brings the
 * parking browser (its sidebar tab), retry-broker the action that converts flows of other AMQP packages.
 */
export const EXTRAS: Record<string, (t: Translate) => void> = {
  [NODE_TYPE.parkReplay]: parkingBrowser,
  [NODE_TYPE.retryBroker]: migrateAction,
};

const registered = new Set<string>();

/**
 * Registers a node type's dialog with the editor, once. The .html passes a second argument, the
 * static part of this same dialog (src/editor/library-definition.ts) written out as a literal for
 * the Flow Library, whose parser reads `….registerType('<type>', {…})` calls: the editor needs
 * nothing of it and gets the dialog itself.
 */
export function registerType(type: string): void {
  const dialog = DIALOGS[type];
  if (!dialog) throw new Error(`node-red-contrib-rabbitmq-retry: no dialog for node type '${type}'`);
  if (registered.has(type)) return;
  registered.add(type);
  const t = i18n(type);
  RED.nodes.registerType(type, dialog(t));
  EXTRAS[type]?.(t);
}
