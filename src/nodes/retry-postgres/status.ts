/** The PostgreSQL node's status, pushed to its users. */
import type { DatabaseState } from '../../lib/postgres';
import { statusKey, type Translate } from '../shared/i18n';
import type { NodeStatus } from '../shared/node-red';

/** The database's state as a status: the most urgent fact first. */
export function databaseStatus(state: DatabaseState | undefined, problems: string[], t: Translate): NodeStatus {
  if (!state) return { fill: 'red', shape: 'ring', text: t('retry-postgres.status.invalid', { problem: problems.join('; ') }) };
  switch (state.phase) {
    case 'up':
      return { fill: 'green', shape: 'dot', text: statusKey('retry-postgres.status.connected') };
    case 'connecting':
      return { fill: 'yellow', shape: 'ring', text: statusKey('retry-postgres.status.connecting') };
    case 'down':
      return { fill: 'red', shape: 'ring', text: statusKey(state.problem === 'auth' ? 'retry-postgres.status.auth' : 'retry-postgres.status.down') };
    case 'closed':
      return { fill: 'grey', shape: 'ring', text: statusKey('retry-postgres.status.closed') };
  }
}
