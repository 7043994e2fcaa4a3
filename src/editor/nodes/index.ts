/** Every node type's dialog, by type: the bundle registers a type when its .html asks (resources/register/<type>.js). */
import { outboxRelay, outboxWrite } from './outbox';
import { parkReplay } from './park-replay';
import { retryBroker } from './retry-broker';
import { retryConfig } from './retry-config';
import { retryConsumer } from './retry-consumer';
import { retryPublish } from './retry-publish';
import { parkPublisher, retrySettle } from './simple';
import { retryDedupe, retryPostgres } from './stores';

export const DIALOGS: Record<string, () => void> = {
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
};
