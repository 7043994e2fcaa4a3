/** What a PostgreSQL error means for a user: the database cannot be reached, refuses the login, lacks a table or column, or something else. Pure. */

export type PostgresProblem = 'unreachable' | 'auth' | 'schema' | 'other';

interface PgLikeError {
  code?: unknown;
  message?: unknown;
  errno?: unknown;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
const AUTH = new Set(['28P01', '28000']);
/** undefined_table, undefined_column, undefined_object, invalid_schema_name. */
const SCHEMA = new Set(['42P01', '42703', '42704', '3F000']);

/** The kind of problem an error from `pg` shows. */
export function postgresProblem(err: unknown): PostgresProblem {
  const e = (err ?? {}) as PgLikeError;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (AUTH.has(code)) return 'auth';
  if (SCHEMA.has(code)) return 'schema';
  if (UNREACHABLE.has(code)) return 'unreachable';
  if (/timeout|terminated|Connection terminated|connect ECONN|the database system is (starting|shutting) up/i.test(message)) return 'unreachable';
  return 'other';
}

/** An error's message in words a user can act on. */
export function postgresErrorText(err: unknown, database: string): string {
  const e = (err ?? {}) as PgLikeError;
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  switch (postgresProblem(err)) {
    case 'auth':
      return `PostgreSQL ${database} refused the login: ${message} (check the user and the password)`;
    case 'unreachable':
      return `PostgreSQL ${database} cannot be reached: ${message}`;
    default:
      return `PostgreSQL ${database}: ${message}`;
  }
}
