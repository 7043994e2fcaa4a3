/** The PostgreSQL config node (`retry-postgres`) as the nodes that use it see it, and its lookup. */
import type { PostgresDatabase } from '../../lib/postgres';
import { findConfig } from './config-lookup';
import type { Node, NodeAPI, NodeStatus } from './node-red';
import { NODE_TYPE } from './node-types';
import type { ConfigUser } from './users';

export interface RetryPostgresNode extends Node {
  /** undefined when the configuration cannot work; `problems` says why. */
  database: PostgresDatabase | undefined;
  problems: string[];
  /** The database without secrets, for labels and messages. */
  display: string;
  register(user: ConfigUser): void;
  deregister(user: ConfigUser): void;
  databaseStatus(): NodeStatus;
}

export function findPostgres(RED: NodeAPI, id: unknown): RetryPostgresNode | undefined {
  return findConfig<RetryPostgresNode>(RED, NODE_TYPE.retryPostgres, id);
}
