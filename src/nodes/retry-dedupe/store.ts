/**
 * The store a retry-dedupe definition asks for: memory (the default: nothing to set up, one Node-RED
 * process), Redis (shared by several instances; one server, Sentinel or Cluster by the URL's scheme;
 * URL, credentials, TLS, a key prefix) or PostgreSQL (a table in a `retry-postgres` database, created
 * in declare mode or checked in check mode); or why it cannot be used.
 */
import { isUnresolvedEnv } from '../../lib/connection';
import { describeRedis, MemoryDedupeStore, PostgresDedupeStore, RedisDedupeStore, redisPrefixProblem, redisUrlProblem, type DedupeStore, type RedisPersistence } from '../../lib/dedupe';
import { parseTableName } from '../../lib/postgres';
import type { Node, NodeAPI } from '../shared/node-red';
import { findPostgres, type RetryPostgresNode } from '../shared/postgres-node';
import { TOPOLOGY_MODES } from '../shared/properties';
import type { DedupeProperties } from './properties';
import { usableTlsConfig } from '../shared/tls-config';

export interface StoreChoice {
  /** undefined when it cannot be built (`problems` says why); it may also be built with problems. */
  store: DedupeStore | undefined;
  /** The PostgreSQL node the store uses: it keeps its pool open until this store is done with it. */
  database: RetryPostgresNode | undefined;
}

/** Says what a Redis server keeps on disk, once, at the store's first start. */
export type PersistenceReport = (store: string, found: RedisPersistence) => void;

/** The store of the node's properties (its kind unknown: none); pushes what stops it to `problems`. */
export function dedupeStore(RED: NodeAPI, node: Node, props: DedupeProperties, problems: string[], onPersistence: PersistenceReport): StoreChoice {
  const { kind } = props;
  if (kind === undefined) return { store: undefined, database: undefined };
  if (kind === 'redis') return { store: redisStore(RED, node, props.redis, problems, onPersistence), database: undefined };
  if (kind === 'postgres') {
    const database = findPostgres(RED, props.postgres.id);
    return { store: postgresStore(database, props.postgres, problems), database };
  }
  return { store: new MemoryDedupeStore({ maxKeys: props.numbers.maxKeys }), database: undefined };
}

/** The TLS options of the selected tls-config node for this Redis URL; throws when they cannot be used. */
function redisTls(RED: NodeAPI, tlsId: string, url: string): Record<string, unknown> | undefined {
  if (tlsId === '') return undefined;
  const tlsNode = usableTlsConfig(RED, tlsId);
  if (/^redis\+(sentinel|cluster):/i.test(url)) throw new Error('a TLS configuration is selected, but TLS is not supported with Sentinel or Cluster yet: clear the TLS configuration, or use one server with rediss://');
  if (!url.startsWith('rediss:')) throw new Error('a TLS configuration is selected but the Redis URL is not TLS: use rediss://');
  return tlsNode.addTLSOptions({});
}

function redisStore(RED: NodeAPI, node: Node, { url, prefix, tlsConfig }: DedupeProperties['redis'], problems: string[], onPersistence: PersistenceReport): DedupeStore | undefined {
  if (isUnresolvedEnv(url)) {
    problems.push(`Redis URL ${url}: environment variable not set`);
    return undefined;
  }
  const urlProblem = redisUrlProblem(url);
  if (urlProblem) {
    problems.push(urlProblem);
    return undefined;
  }
  const prefixProblem = prefix === undefined ? undefined : redisPrefixProblem(url, prefix);
  if (prefixProblem) problems.push(prefixProblem);
  let tls: Record<string, unknown> | undefined;
  try {
    tls = redisTls(RED, tlsConfig, url);
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

function postgresStore(pg: RetryPostgresNode | undefined, { table: tableName, mode }: DedupeProperties['postgres'], problems: string[]): DedupeStore | undefined {
  if (!pg) {
    problems.push('select a PostgreSQL database (a retry-postgres configuration)');
    return undefined;
  }
  if (!pg.database) {
    problems.push(`PostgreSQL ${pg.display}: ${pg.problems.join('; ')}`);
    return undefined;
  }
  const table = parseTableName(tableName);
  if ('problem' in table) {
    problems.push(table.problem);
    return undefined;
  }
  if (!(TOPOLOGY_MODES as readonly string[]).includes(mode)) problems.push(`mode '${mode}' is not one of ${TOPOLOGY_MODES.join(', ')}`);
  return new PostgresDedupeStore(pg.database, { table, mode: mode === 'check' ? 'check' : 'declare' });
}
