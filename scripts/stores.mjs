// @ts-check
// PostgreSQL and Redis as `npm test` and `npm start` find them (scripts/services.mjs has where they
// are): whether they answer, and the database created when the server answers without it.
import { probe } from './services.mjs';

/**
 * Logs in to PostgreSQL: 'ok', 'no-database' (the server answers, the database does not exist), or why not.
 * @param {string} databaseUrl
 * @returns {Promise<'ok' | 'no-database' | string>}
 */
export async function databaseState(databaseUrl) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return 'ok';
  } catch (err) {
    const { code, message } = /** @type {{ code?: string, message?: string }} */ (err);
    if (code === '3D000') return 'no-database';
    return code === 'ECONNREFUSED' ? 'refused' : (message ?? String(err));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * CREATE DATABASE for the database of the URL, logged in to the server's `postgres` database.
 * Undefined when done; else why not.
 * @param {string} databaseUrl
 * @returns {Promise<string | undefined>}
 */
export async function createDatabase(databaseUrl) {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * PING at the Redis URL: 'ok', 'refused', or why not.
 * @param {string} redisUrl
 * @returns {Promise<'ok' | 'refused' | string>}
 */
export async function redisState(redisUrl) {
  try {
    const { hostname, port } = new URL(redisUrl);
    if (!(await probe(hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', Number(port || 6379)))) return 'refused';
  } catch {
    return 'REDIS_URL is not a URL';
  }
  const { Redis } = await import('ioredis');
  const client = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return 'ok';
  } catch (err) {
    const { code, message } = /** @type {{ code?: string, message?: string }} */ (err);
    return code === 'ECONNREFUSED' ? 'refused' : (message ?? String(err));
  } finally {
    client.disconnect();
  }
}
