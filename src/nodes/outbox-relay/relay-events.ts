/** What an outbox relay's events become on its node: warnings and log lines, and a status update. */
import type { OutboxRelay } from '../../lib/outbox';
import type { Node } from '../shared/node-red';
import type { StatusUpdates } from '../shared/status';

export function followRelay(relay: OutboxRelay, node: Node, table: string, on: { rowsChanged(): void; status: StatusUpdates }): void {
  relay.on('sent', () => on.status.soon());
  relay.on('failure', (f) => {
    if (f.final) {
      node.warn(`outbox event ${f.id} failed after ${f.attempts} attempts, not published: ${f.error} (send msg.topic "retry" to try again)`);
      on.rowsChanged();
    } else {
      node.warn(`outbox event ${f.id} not published (attempt ${f.attempts}): ${f.error}; trying again after the backoff`);
    }
    on.status.soon();
  });
  relay.on('error', (text) => {
    node.error(text);
    on.status.now();
  });
  relay.on('recovered', () => {
    node.log(`outbox relay on ${table} works again`);
    on.status.now();
  });
}
