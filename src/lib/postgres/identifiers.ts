/** Table names a user types (`outbox`, `app.outbox`), checked and quoted for SQL. Pure. */

const PART = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export interface TableName {
  schema: string | undefined;
  table: string;
  /** Quoted for SQL: `"app"."outbox"`. */
  sql: string;
  /** As a person reads it (status, log, health report): `app.outbox`, `outbox`. */
  display: string;
}

/** A table name, optionally schema-qualified, of plain identifiers; or why it is not one. */
export function parseTableName(text: string): TableName | { problem: string } {
  const parts = text.trim().split('.');
  if (parts.length > 2 || parts.some((p) => !PART.test(p))) {
    return { problem: `table name ${JSON.stringify(text)} must be a name of letters, digits and _ (optionally schema.table)` };
  }
  const [first, second] = parts as [string, string | undefined];
  const schema = second === undefined ? undefined : first;
  const table = second ?? first;
  return { schema, table, sql: schema ? `${quoteIdent(schema)}.${quoteIdent(table)}` : quoteIdent(table), display: schema ? `${schema}.${table}` : table };
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** An index or constraint name derived from a table name, within PostgreSQL's 63 bytes. */
export function derivedName(table: TableName, suffix: string): string {
  return `${table.table.slice(0, 63 - suffix.length - 1)}_${suffix}`;
}
