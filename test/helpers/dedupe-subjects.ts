/**
 * The deduplication stores on the shared services, each opened fresh for a test and removed after it:
 * memory, Redis (its keys under a prefix of its own) and PostgreSQL (a table of its own).
 */
import { randomBytes } from 'node:crypto';
import { MemoryDedupeStore, PostgresDedupeStore, RedisDedupeStore, type DedupeStore } from '../../src/lib/dedupe';
import { parseTableName, PostgresDatabase } from '../../src/lib/postgres';
import { DATABASE_URL, REDIS_URL } from './private-stores';

/** Removes what a test wrote to a Redis: the keys under its own prefix. */
export async function removeRedisKeys(url: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const r = new Redis(url);
  try {
    const keys = await r.keys(`${prefix}*`);
    if (keys.length > 0) await r.del(...keys);
  } finally {
    r.disconnect();
  }
}

export interface OpenedStore {
  store: DedupeStore;
  cleanup(): Promise<void>;
}

export interface StoreSubject {
  name: string;
  open(): Promise<OpenedStore>;
}

/** `label` goes into the Redis prefix and the table name, so what a test leaves behind says whose it is. */
export function sharedStoreSubjects(label: string): { memory: StoreSubject; redis: StoreSubject; postgres: StoreSubject } {
  return {
    memory: {
      name: 'memory',
      open: () => {
        const store = new MemoryDedupeStore();
        return Promise.resolve({ store, cleanup: () => store.close() });
      },
    },
    redis: {
      name: 'redis',
      open: async () => {
        const prefix = `test-${label}-${randomBytes(4).toString('hex')}:`;
        const store = new RedisDedupeStore({ url: REDIS_URL, prefix });
        await store.prepare();
        return {
          store,
          cleanup: async () => {
            await removeRedisKeys(REDIS_URL, prefix);
            await store.close();
          },
        };
      },
    },
    postgres: {
      name: 'postgres',
      open: async () => {
        const db = new PostgresDatabase({ connectionString: DATABASE_URL });
        const name = `test_${label}_${randomBytes(4).toString('hex')}`;
        const store = new PostgresDedupeStore(db, { table: parseTableName(name) as never, mode: 'declare', sweepMs: 0 });
        await store.prepare();
        return {
          store,
          cleanup: async () => {
            await store.close();
            await db.query(`DROP TABLE IF EXISTS ${name}`);
            await db.close();
          },
        };
      },
    },
  };
}
