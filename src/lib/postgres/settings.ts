/**
 * Where a PostgreSQL database is and how to log in: a connection string, or host / port / database /
 * user, the password kept apart (Node-RED credentials), TLS options. Pure: what a pool is given, and
 * how the database is named in statuses and logs (never with a password).
 */
import type { PoolConfig } from 'pg';

export interface PostgresSettings {
  /** `postgres://user@host:5432/db?...`; when set, host / port / database / user below are defaults it overrides. */
  connectionString?: string;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string;
  /** Socket options for TLS (ca, cert, key, rejectUnauthorized), or undefined for a plain connection. */
  tls?: Record<string, unknown>;
  /** Most connections the pool opens; default 10. */
  maxConnections?: number;
  /** Names the connections in pg_stat_activity. */
  applicationName?: string;
  /** How long a connection attempt may take; default 5 s. */
  connectTimeoutMs?: number;
}

/** A connection string's parts, or why it is not one. */
export function parseConnectionString(text: string): { host?: string; port?: number; database?: string; user?: string; password?: boolean } | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'database URL is not a URL: write postgres://user@host:5432/database' };
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return { problem: `database URL must start with postgres:// or postgresql://, not ${url.protocol}//` };
  }
  const port = url.port === '' ? undefined : Number(url.port);
  return {
    host: url.hostname === '' ? undefined : decodeURIComponent(url.hostname),
    port,
    database: url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : undefined,
    user: url.username === '' ? undefined : decodeURIComponent(url.username),
    password: url.password !== '',
  };
}

/** Names the database without secrets: `app@db.example:5432/orders`. */
export function describeDatabase(settings: PostgresSettings): string {
  const parsed = settings.connectionString ? parseConnectionString(settings.connectionString) : {};
  const parts = 'problem' in parsed ? {} : parsed;
  const host = parts.host ?? settings.host ?? 'localhost';
  const port = parts.port ?? settings.port ?? 5432;
  const user = parts.user ?? settings.user;
  const database = parts.database ?? settings.database ?? user ?? '';
  return `${user ? `${user}@` : ''}${host}:${port}/${database}`;
}

/** What `pg.Pool` is given. A password in the settings wins over one in the connection string. */
export function poolConfig(settings: PostgresSettings): PoolConfig {
  const config: PoolConfig = {
    max: settings.maxConnections ?? 10,
    connectionTimeoutMillis: settings.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: settings.applicationName ?? 'node-red-rabbitmq-retry',
    keepAlive: true,
  };
  if (settings.connectionString) {
    // pg lets the connection string win over separate fields: the user and password given apart go into it.
    const url = new URL(settings.connectionString);
    if (settings.user && url.username === '') url.username = encodeURIComponent(settings.user);
    if (settings.password) url.password = encodeURIComponent(settings.password);
    config.connectionString = url.toString();
  } else {
    if (settings.host) config.host = settings.host;
    if (settings.port) config.port = settings.port;
    if (settings.database) config.database = settings.database;
    if (settings.user) config.user = settings.user;
    if (settings.password) config.password = settings.password;
  }
  if (settings.tls) config.ssl = settings.tls;
  return config;
}
