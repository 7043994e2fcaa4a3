/** An outbox relay's status: the most urgent first — what stops relaying, then rows given up on, then the counts. */
import { statusKey, type Translate } from '../shared/i18n';
import type { NodeStatus } from '../shared/node-red';
import type { TableProblem } from '../shared/table-watch';

export interface RelayState {
  /** Why the table is not usable, if it is not. */
  tableProblem: TableProblem | undefined;
  /** The database's own status, as its config node pushed it. */
  dbStatus: NodeStatus;
  brokerConnected: boolean;
  /** The broker's last pushed status (shown while it is not connected). */
  brokerStatus: NodeStatus | undefined;
  sent: number;
  /** The table's rows at the last look; undefined before the first. */
  rows: { pending: number; failed: number } | undefined;
}

export function relayStatus(s: RelayState, t: Translate): NodeStatus {
  // A database that cannot be reached or refuses the login is its own status, not the table's.
  if (s.tableProblem) return s.tableProblem.kind === 'table' ? { fill: 'red', shape: 'ring', text: statusKey('outbox-relay.status.table') } : s.dbStatus;
  if (s.dbStatus.fill === 'red') return s.dbStatus;
  if (!s.brokerConnected) return s.brokerStatus ?? { fill: 'yellow', shape: 'ring', text: statusKey('outbox-relay.status.waiting') };
  const failed = s.rows?.failed ?? 0;
  const text = (failed > 0 ? t('outbox-relay.status.failed', { count: failed }) : '') + t('outbox-relay.status.counts', { sent: s.sent, pending: s.rows?.pending ?? 0 });
  return { fill: failed > 0 ? 'yellow' : 'green', shape: 'dot', text };
}
