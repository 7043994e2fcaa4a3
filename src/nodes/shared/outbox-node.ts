/**
 * What both outbox nodes share: their database (a retry-postgres node) and their table, declared or
 * checked at start and again every so often while it is not usable (TableWatch).
 */
import { OUTBOX_COLUMNS, OUTBOX_INDEXES, outboxTableDdl } from '../../lib/outbox';
import { declareOrCheckTable, parseTableName, postgresProblem, type PostgresDatabase, type TableName } from '../../lib/postgres';
import type { RelayInput } from '../../lib/health';
import type { Node, NodeAPI } from './node-red';
import { findPostgres, type RetryPostgresNode } from './postgres-node';
import { TOPOLOGY_MODES, type OutboxTableProperties } from './properties';

/** The last look of an outbox relay at its table: what it found, or why it failed. */
export type RelayLook = NonNullable<RelayInput['look']>;

/** The outbox relay node as the health report sees it. */
export interface RelayNode extends Node {
  /** Its state now: its table, what stops it, whether its broker is connected, its last look at the table. */
  relayHealth(): Omit<RelayInput, 'id' | 'name'>;
}

export interface OutboxTarget {
  pg: RetryPostgresNode;
  database: PostgresDatabase;
  table: TableName;
  /** Resolves when the table is there as expected (created in declare mode); rejects with a TablePrepareError. Tries again after a failure. */
  prepare(): Promise<void>;
}

/**
 * Why the table could not be prepared: `table` when it is not as expected (or a statement on it
 * failed), `database` when the database cannot be reached or refuses the login — then the database's
 * status says it, not the table.
 */
export class TablePrepareError extends Error {
  constructor(
    message: string,
    readonly kind: 'table' | 'database',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A prepare failure's kind; an error that is not a TablePrepareError is a table problem. */
export function prepareFailureKind(err: unknown): 'table' | 'database' {
  return err instanceof TablePrepareError ? err.kind : 'table';
}

/** The node's database and table, or the problems that stop it. */
export function outboxTarget(RED: NodeAPI, props: OutboxTableProperties): OutboxTarget | { problems: string[] } {
  const pg = findPostgres(RED, props.postgres);
  if (!pg) return { problems: ['select a PostgreSQL database (a retry-postgres configuration)'] };
  if (!pg.database) return { problems: [`PostgreSQL ${pg.display}: ${pg.problems.join('; ')}`] };
  const table = parseTableName(props.table);
  if ('problem' in table) return { problems: [table.problem] };
  const { mode } = props;
  if (!(TOPOLOGY_MODES as readonly string[]).includes(mode)) return { problems: [`mode '${mode}' is not one of ${TOPOLOGY_MODES.join(', ')}`] };
  const database = pg.database;
  let prepared: Promise<void> | undefined;
  const prepare = (): Promise<void> => {
    prepared ??= declareOrCheckTable(database, table, mode === 'check' ? 'check' : 'declare', outboxTableDdl(table), OUTBOX_COLUMNS, OUTBOX_INDEXES).then(
      (problems) => {
        if (problems.length > 0) throw new TablePrepareError(`outbox table: ${problems.join('; ')}`, 'table');
      },
      (err: unknown) => {
        const problem = postgresProblem(err);
        const kind = problem === 'auth' || problem === 'unreachable' ? 'database' : 'table';
        throw new TablePrepareError(`outbox table ${table.sql}: ${(err as Error).message}`, kind, { cause: err });
      },
    );
    return prepared.catch((err: unknown) => {
      prepared = undefined;
      throw err;
    });
  };
  return { pg, database, table, prepare };
}
