/** The PostgreSQL config node (`retry-postgres`) as the nodes that use it see it, and its status. */
import type { DatabaseState, PostgresDatabase } from '../../lib/postgres';
import { statusKey, type Translate } from './i18n';
import type { Node, NodeAPI, NodeStatus } from './node-red';

/** A node using the database: gets its status pushed, like a broker's user. */
export interface DatabaseUser {
  id: string;
  status(status: NodeStatus): void;
}

export interface RetryPostgresNode extends Node {
  /** undefined when the configuration cannot work; `problems` says why. */
  database: PostgresDatabase | undefined;
  problems: string[];
  /** The database without secrets, for labels and messages. */
  display: string;
  register(user: DatabaseUser): void;
  deregister(user: DatabaseUser): void;
  databaseStatus(): NodeStatus;
}

export function findPostgres(RED: NodeAPI, id: unknown): RetryPostgresNode | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  const node = RED.nodes.getNode(id);
  return node && node.type === 'retry-postgres' ? (node as RetryPostgresNode) : undefined;
}

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
