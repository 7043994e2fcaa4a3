/**
 * The outbox table: one row per event, written in the business transaction, published by the relay.
 *
 *   seq             bigserial PRIMARY KEY    the order rows were written in
 *   id              text NOT NULL UNIQUE     the event id, published as the messageId (uuid by default)
 *   exchange        text NOT NULL            where it is published
 *   routing_key     text NOT NULL
 *   payload         bytea NOT NULL           the body, encoded as retry-publish encodes msg.payload
 *   headers         jsonb NOT NULL
 *   properties      jsonb NOT NULL           contentType, correlationId, timestamp, persistent, …
 *   order_key       text                     rows of one key are published in order (when asked)
 *   status          text NOT NULL            pending | sent | failed
 *   attempts        integer NOT NULL         publishes tried
 *   next_attempt_at timestamptz NOT NULL     not before (backoff after a failure)
 *   last_error      text                     why the last publish failed
 *   created_at      timestamptz NOT NULL
 *   sent_at         timestamptz              when the broker confirmed it
 */
import { derivedName, type ExpectedColumn, type ExpectedIndex, type TableName } from '../postgres';

export type OutboxStatus = 'pending' | 'sent' | 'failed';

export const OUTBOX_COLUMNS: ExpectedColumn[] = [
  { name: 'seq', type: 'bigint' },
  { name: 'id', type: 'text' },
  { name: 'exchange', type: 'text' },
  { name: 'routing_key', type: 'text' },
  { name: 'payload', type: 'bytea' },
  { name: 'headers', type: 'jsonb' },
  { name: 'properties', type: 'jsonb' },
  { name: 'order_key', type: 'text' },
  { name: 'status', type: 'text' },
  { name: 'attempts', type: 'integer' },
  { name: 'next_attempt_at', type: 'timestamp with time zone' },
  { name: 'last_error', type: 'text' },
  { name: 'created_at', type: 'timestamp with time zone' },
  { name: 'sent_at', type: 'timestamp with time zone' },
];

export const OUTBOX_INDEXES: ExpectedIndex[] = [
  { columns: ['seq'], unique: true, describe: 'primary key (seq)' },
  { columns: ['id'], unique: true, describe: 'unique index on (id)' },
  { columns: ['seq'], where: "status = 'pending'", describe: "index on (seq) WHERE status = 'pending' (the claim walks it)" },
  { columns: ['order_key', 'seq'], describe: 'index on (order_key, seq) for pending rows' },
  { columns: ['sent_at'], describe: 'index on (sent_at) for sent rows' },
];

/** The statements that create the table and its indexes (declare mode; also in the docs). */
export function outboxTableDdl(table: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  exchange text NOT NULL,
  routing_key text NOT NULL,
  payload bytea NOT NULL,
  headers jsonb NOT NULL DEFAULT '{}',
  properties jsonb NOT NULL DEFAULT '{}',
  order_key text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
)`,
    `CREATE INDEX IF NOT EXISTS "${derivedName(table, 'claim')}" ON ${table.sql} (seq) WHERE status = 'pending'`,
    `CREATE INDEX IF NOT EXISTS "${derivedName(table, 'order')}" ON ${table.sql} (order_key, seq) WHERE status = 'pending'`,
    `CREATE INDEX IF NOT EXISTS "${derivedName(table, 'sent')}" ON ${table.sql} (sent_at) WHERE status = 'sent'`,
  ];
}

/** The NOTIFY channel a write signals and the relay listens on. */
export function outboxChannel(table: TableName): string {
  return derivedName(table, 'outbox');
}
