/**
 * Checks a table is as a component expects it (columns with their types, indexes), the way the
 * topology is checked on the broker: nothing is changed, every difference is named.
 */
import type { Queryable } from './database';
import type { TableName } from './identifiers';

export interface ExpectedColumn {
  name: string;
  /** As information_schema.columns.data_type says it: `text`, `uuid`, `jsonb`, `integer`, `timestamp with time zone`, `bigint`. */
  type: string;
}

export interface ExpectedIndex {
  /** Columns the index covers, in order; `unique` when it must be a unique index or the primary key. */
  columns: string[];
  unique?: boolean;
  /** A partial index's predicate, as written (`status = 'pending'`): an index of the same columns without it, or with another, is not it. */
  where?: string;
  /** Names the index for the report: `primary key (scope, key)`. */
  describe: string;
}

/** Differences between a table and what is expected; empty when it is as expected. */
export async function checkTable(db: Queryable, table: TableName, columns: ExpectedColumn[], indexes: ExpectedIndex[]): Promise<string[]> {
  const found = await checkColumns(db, table, columns);
  if (!found.exists) return found.problems;
  return [...found.problems, ...(await checkIndexes(db, table, indexes))];
}

/** Whether the table exists, and how its columns differ from those expected (every one named). */
async function checkColumns(db: Queryable, table: TableName, columns: ExpectedColumn[]): Promise<{ exists: boolean; problems: string[] }> {
  const found = await db.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM information_schema.columns
      WHERE table_name = $1 AND table_schema = COALESCE($2, current_schema())`,
    [table.table, table.schema ?? null],
  );
  if (found.rows.length === 0) return { exists: false, problems: [`table ${table.sql} does not exist (declare mode creates it)`] };
  const problems: string[] = [];
  const types = new Map(found.rows.map((r) => [r.column_name, r.data_type]));
  for (const column of columns) {
    const type = types.get(column.name);
    if (type === undefined) problems.push(`table ${table.sql} has no column ${column.name} (${column.type})`);
    else if (type !== column.type) problems.push(`column ${table.sql}.${column.name} is ${type}, not ${column.type}`);
  }
  return { exists: true, problems };
}

/** The expected indexes the table lacks. */
async function checkIndexes(db: Queryable, table: TableName, indexes: ExpectedIndex[]): Promise<string[]> {
  const idx = await db.query<{ columns: string[]; unique: boolean; predicate: string | null }>(
    `SELECT ARRAY(SELECT a.attname::text
                     FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                    ORDER BY k.n) AS columns,
            i.indisunique AS unique, pg_get_expr(i.indpred, i.indrelid) AS predicate
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace ns ON ns.oid = c.relnamespace
      WHERE c.relname = $1 AND ns.nspname = COALESCE($2, current_schema())`,
    [table.table, table.schema ?? null],
  );
  const problems: string[] = [];
  for (const index of indexes) {
    const ok = idx.rows.some(
      (r) => sameStart(r.columns, index.columns) && (!index.unique || (r.unique && r.columns.length === index.columns.length)) && (index.where === undefined || samePredicate(r.predicate, index.where)),
    );
    if (!ok) problems.push(`table ${table.sql} has no ${index.describe}`);
  }
  return problems;
}

/**
 * Whether an index's predicate, as PostgreSQL prints it (`(status = 'pending'::text)`), is the one
 * written (`status = 'pending'`): compared without parentheses, casts to text and spaces. Pure.
 */
export function samePredicate(printed: string | null, written: string): boolean {
  if (printed === null) return false;
  const plain = (s: string): string => s.replace(/::text\b/g, '').replace(/[()\s]/g, '');
  return plain(printed) === plain(written);
}

function sameStart(have: string[], want: string[]): boolean {
  return want.every((column, i) => have[i] === column);
}

/**
 * A component's table, as the topology is on the broker: `declare` creates what is missing (its DDL:
 * CREATE TABLE / INDEX IF NOT EXISTS) and then checks; `check` only checks. A table that exists with
 * missing columns or other types is not touched in either mode: every difference is named, as check
 * mode names them (an index DDL on it would fail on the first missing column, after creating others).
 * Resolves with the differences (empty when as expected).
 */
export async function declareOrCheckTable(db: Queryable, table: TableName, mode: 'declare' | 'check', ddl: readonly string[], columns: ExpectedColumn[], indexes: ExpectedIndex[]): Promise<string[]> {
  if (mode === 'declare') {
    const found = await checkColumns(db, table, columns);
    if (found.exists && found.problems.length > 0) return [...found.problems, ...(await checkIndexes(db, table, indexes))];
    for (const statement of ddl) {
      // Two nodes declaring the same table at once: CREATE ... IF NOT EXISTS can still collide in the
      // catalog (unique_violation, duplicate_table / duplicate_object); the other one made it: go on.
      await db.query(statement).catch((err: unknown) => {
        if (!['23505', '42P07', '42710'].includes(String((err as { code?: unknown }).code))) throw err;
      });
    }
  }
  return checkTable(db, table, columns, indexes);
}
