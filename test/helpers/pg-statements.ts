/**
 * The statements `pg` sends, seen on the client: every Client's `query` (pooled ones included) is
 * wrapped until `stop()`. For tests that count round trips against the real PostgreSQL.
 */
import pg from 'pg';

/** A statement sent: its text and its parameters. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/** The text of a query as `pg` is given it: a string, or a config object with its text. */
function textOf(query: unknown): string {
  if (typeof query === 'string') return query;
  const text = (query as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '';
}

/** Records the statements whose text `keep` accepts (sent by any client but `except`), from now until `stop()`. */
export function watchStatements(keep: (text: string) => boolean, except?: pg.Client): { sent: SentStatement[]; stop(): void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const sent: SentStatement[] = [];
  proto.query = function (this: pg.Client, ...args: unknown[]): unknown {
    const text = textOf(args[0]);
    if (this !== except && keep(text)) sent.push({ text, values: Array.isArray(args[1]) ? (args[1] as unknown[]) : [] });
    return original.apply(this, args);
  };
  return {
    sent,
    stop: () => {
      proto.query = original;
    },
  };
}
