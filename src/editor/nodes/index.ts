/**
 * Every node type's dialog, by type: its definition for `RED.nodes.registerType`, a pure function of
 * the type's translator (nothing runs in the editor until Node-RED calls its functions), so the build
 * can read it too (scripts/build-editor.mjs writes its static part into each node's .html).
 */
import type { Translate } from '../index';
import { migrateAction } from '../migrate-action';
import type { NodeDefinition } from '../red';
import { outboxRelay, outboxWrite } from './outbox';
import { parkReplay } from './park-replay';
import { parkingBrowser } from './parking-browser';
import { retryConsole } from './retry-console';
import { retryHealth } from './retry-health';
import { retryPublish } from './retry-publish';
import { retryBroker } from '../../nodes/retry-broker/editor';
import { retryConfig } from '../../nodes/retry-config/editor';
import { retryDedupe } from '../../nodes/retry-dedupe/editor';
import { retryPostgres } from '../../nodes/retry-postgres/editor';
import { parkPublisher } from '../../nodes/park-publisher/editor';
import { retryConsumer } from '../../nodes/retry-consumer/editor';
import { retrySettle } from '../../nodes/retry-settle/editor';

export const DIALOGS: Record<string, (t: Translate) => NodeDefinition> = {
  'retry-broker': retryBroker,
  'retry-config': retryConfig,
  'retry-consumer': retryConsumer,
  'retry-settle': retrySettle,
  'park-publisher': parkPublisher,
  'retry-publish': retryPublish,
  'park-replay': parkReplay,
  'retry-dedupe': retryDedupe,
  'retry-postgres': retryPostgres,
  'outbox-write': outboxWrite,
  'outbox-relay': outboxRelay,
  'retry-health': retryHealth,
  'retry-console': retryConsole,
};

/**
 * What a node type adds to the editor besides its dialog, once registered: park-replay brings the
 * parking browser, retry-broker the action that converts flows of other AMQP packages.
 */
export const EXTRAS: Record<string, (t: Translate) => void> = {
  'park-replay': parkingBrowser,
  'retry-broker': migrateAction,
};
