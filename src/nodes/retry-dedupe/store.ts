/**
 * The store a retry-dedupe definition asks for: memory (the default: nothing to set up, one Node-RED
 * process), Redis (shared by several instances; one server, Sentinel or Cluster by the URL's scheme;
 * URL, credentials, TLS, a key prefix) or PostgreSQL (a table in a `retry-postgres` database, created
 * in declare mode or checked in check mode); or why it cannot be used.
 */
import { isUnresolvedEnv } from '../../lib/connection';
import { describeRedis, MemoryDedupeStore, PostgresDedupeStore, RedisDedupeStore, redisPrefixProblem, redisUrlProblem, type DedupeStore, type RedisPersistence } from '../../lib/dedupe';
import { parseTableName } from '../../lib/postgres';
import { stringProp, type Node, type NodeAPI } from '../shared/node-red';
import { findPostgres, type RetryPostgresNode } from '../shared/postgres-node';
import { TOPOLOGY_MODES } from '../shared/properties';
import { DEDUPE_KINDS, DEFAULT_DEDUPE_TABLE } from './properties';
import { usableTlsConfig } from '../shared/tls-config';

export interface StoreChoice {
  /** undefined when it cannot be built (`problems` says why); it may also be built with problems. */
  store: DedupeStore | undefined;
  /** The PostgreSQL node the store uses: it keeps its pool open until this store is done with it. */
  database: RetryPostgresNode | undefined;
}

/** Says what a Redis server keeps on disk, once, at the store's first start. */
export type PersistenceReport = (store: string, found: RedisPersistence) => void;

/** The store of the (env-resolved) definition; pushes what stops it to `problems`. */
export function dedupeStore(RED: NodeAPI, node: Node, def: Record<string, unknown>, maxKeys: number, problems: string[], onPersistence: PersistenceReport): StoreChoice {
  const kind = stringProp(def.kind, 'memory');
  if (!(DEDUPE_KINDS as readonly string[]).includes(kind)) {
    problems.push(`store kind '${kind}' is not one of ${DEDUPE_KINDS.join(', ')}`);
    return { store: undefined, database: undefined };
  }
  if (kind === 'redis') return { store: redisStore(RED, node, def, problems, onPersistence), database: undefined };
  if (kind === 'postgres') {
    const database = findPostgres(RED, def.postgres);
    return { store: postgresStore(database, def, problems), database };
  }
  return { store: new MemoryDedupeStore({ maxKeys }), database: undefined };
}

/** The TLS options of the selected tls-config node for this Redis URL; throws when they cannot be used. */
function redisTls(RED: NodeAPI, tlsId: string, url: string): Record<string, unknown> | undefined {
  if (tlsId === '') return undefined;
  const tlsNode = usableTlsConfig(RED, tlsId);
  if (/^redis\+(sentinel|cluster):/i.test(url)) throw new Error('a TLS configuration is selected, but TLS is not supported with Sentinel or Cluster yet: clear the TLS configuration, or use one server with rediss://');
  if (!url.startsWith('rediss:')) throw new Error('a TLS configuration is selected but the Redis URL is not TLS: use rediss://');
  return tlsNode.addTLSOptions({});
}

function redisStore(RED: NodeAPI, node: Node, def: Record<string, unknown>, problems: string[], onPersistence: PersistenceReport): DedupeStore | undefined {
  const url = stringProp(def.url).trim() || 'redis://127.0.0.1:6379';
  if (isUnresolvedEnv(url)) {
    problems.push(`Redis URL ${url}: environment variable not set`);
    return undefined;
  }
  const urlProblem = redisUrlProblem(url);
  if (urlProblem) {
    problems.push(urlProblem);
    return undefined;
  }
  const prefix = stringProp(def.prefix) || undefined;
  const prefixProblem = prefix === undefined ? undefined : redisPrefixProblem(url, prefix);
  if (prefixProblem) problems.push(prefixProblem);
  let tls: Record<string, unknown> | undefined;
  try {
    tls = redisTls(RED, stringProp(def.tlsConfig), url);
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (problems.length > 0) return undefined;
  return new RedisDedupeStore({
    url,
    username: node.credentials?.user || undefined,
    password: node.credentials?.password || undefined,
    tls,
    prefix,
    onPersistence: (found) => onPersistence(describeRedis(url), found),
  });
}

function postgresStore(pg: RetryPostgresNode | undefined, def: Record<string, unknown>, problems: string[]): DedupeStore | undefined {
  if (!pg) {
    problems.push('select a PostgreSQL database (a retry-postgres configuration)');
    return undefined;
  }
  if (!pg.database) {
    problems.push(`PostgreSQL ${pg.display}: ${pg.problems.join('; ')}`);
    return undefined;
  }
  const table = parseTableName(stringProp(def.table).trim() || DEFAULT_DEDUPE_TABLE);
  if ('problem' in table) {
    problems.push(table.problem);
    return undefined;
  }
  const mode = stringProp(def.mode, 'declare');
  if (!(TOPOLOGY_MODES as readonly string[]).includes(mode)) problems.push(`mode '${mode}' is not one of ${TOPOLOGY_MODES.join(', ')}`);
  return new PostgresDedupeStore(pg.database, { table, mode: mode === 'check' ? 'check' : 'declare' });
}
