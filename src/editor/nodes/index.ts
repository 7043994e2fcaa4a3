/**
 * Every node type's dialog, by type (each kept in its node's folder, src/nodes/<type>/editor.ts, or
 * here for the types not moved there yet): its definition for `RED.nodes.registerType`, a pure function of
 * the type's translator (nothing runs in the editor until Node-RED calls its functions), so the build
 * can read it too (scripts/build-editor.mjs writes its static part into each node's .html).
 */
import type { Translate } from '../index';
import { migrateAction } from '../migrate-action';
import type { NodeDefinition } from '../red';
import { NODE_TYPE, type NodeType } from '../../nodes/shared/node-types';
import { outboxRelay } from '../../nodes/outbox-relay/editor';
import { outboxWrite } from '../../nodes/outbox-write/editor';
import { parkReplay } from '../../nodes/park-replay/editor';
import { parkingBrowser } from './parking-browser';
import { retryConsole } from '../../nodes/retry-console/editor';
import { retryHealth } from '../../nodes/retry-health/editor';
import { retryPublish } from '../../nodes/retry-publish/editor';
import { retryBroker } from '../../nodes/retry-broker/editor';
import { retryConfig } from '../../nodes/retry-config/editor';
import { retryDedupe } from '../../nodes/retry-dedupe/editor';
import { retryPostgres } from '../../nodes/retry-postgres/editor';
import { parkPublisher } from '../../nodes/park-publisher/editor';
import { retryConsumer } from '../../nodes/retry-consumer/editor';
import { retrySettle } from '../../nodes/retry-settle/editor';

/** Every node type's dialog: the compiler says when a type has none. */
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
 * parking browser, retry-broker the action that converts flows of other AMQP packages.
 */
export const EXTRAS: Record<string, (t: Translate) => void> = {
  [NODE_TYPE.parkReplay]: parkingBrowser,
  [NODE_TYPE.retryBroker]: migrateAction,
};
