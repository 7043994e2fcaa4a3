/**
 * `retry-dedupe` config node: the store of processed message keys that a consumer with deduplication
 * claims, completes and releases keys in. Memory (the default: nothing to set up, one Node-RED
 * process), Redis (shared by several instances; one server, Sentinel or Cluster by the URL's scheme;
 * URL, credentials, TLS, a key prefix) or PostgreSQL
 * (a table in a `retry-postgres` database, created in declare mode or checked in check mode). A Redis
 * store says at its first start what the server keeps on disk: in the log, and on its consumers'
 * statuses when it keeps nothing (every processed key is forgotten on a restart).
 */
import { isUnresolvedEnv, resolveEnvFields } from '../../lib/connection';
import { describeRedis, MemoryDedupeStore, PostgresDedupeStore, RedisDedupeStore, redisKeeps, redisPrefixProblem, redisUrlProblem, type DedupeStore, type RedisPersistence } from '../../lib/dedupe';
import { parseTableName } from '../../lib/postgres';
import { readNumberFields } from '../../lib/rules';
import type { DedupeStoreNode } from '../shared/dedupe-node';
import { translator } from '../shared/i18n';
import { ResourceUsers } from '../shared/users';
import { stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { findPostgres } from '../shared/postgres-node';
import { DEDUPE_KINDS, DEFAULT_DEDUPE_TABLE, NUMBER_FIELDS, TOPOLOGY_MODES } from '../shared/properties';

interface TlsConfigNode extends Node {
  valid?: boolean;
  addTLSOptions(options: Record<string, unknown>): Record<string, unknown>;
}

const HOUR = 3_600_000;

export = function register(RED: NodeAPI): void {
  function RetryDedupe(this: DedupeStoreNode, saved: NodeDef): void {
    RED.nodes.createNode(this, saved);
    const node = this;
    const t = translator(RED);
    node.forgetsOnRestart = false;
    const def = resolveEnvFields(saved, (name) => RED.util.evaluateNodeProperty(name, 'env', node));
    const users = new ResourceUsers();
    const numbers = readNumberFields(def, NUMBER_FIELDS['retry-dedupe']);
    const problems = [...numbers.problems];
    node.retentionMs = numbers.values.retentionHours * HOUR;
    node.leaseMs = numbers.values.leaseSeconds * 1000;
    const kind = stringProp(def.kind, 'memory');
    let store: DedupeStore | undefined;
    /** The PostgreSQL node the store uses: it keeps its pool open until this store is done with it. */
    let database: ReturnType<typeof findPostgres>;
    if (!(DEDUPE_KINDS as readonly string[]).includes(kind)) problems.push(`store kind '${kind}' is not one of ${DEDUPE_KINDS.join(', ')}`);
    else if (kind === 'redis') store = redisStore();
    else if (kind === 'postgres') store = postgresStore();
    else store = new MemoryDedupeStore({ maxKeys: numbers.values.maxKeys });
    node.problems = problems;
    node.store = problems.length === 0 ? store : undefined;
    if (problems.length > 0) node.error(`deduplication store not usable: ${problems.join('; ')}`);

    function redisStore(): DedupeStore | undefined {
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
      const tlsId = stringProp(def.tlsConfig);
      if (tlsId !== '') {
        const tlsNode = RED.nodes.getNode(tlsId) as TlsConfigNode | null;
        if (!tlsNode || typeof tlsNode.addTLSOptions !== 'function') problems.push('the selected TLS configuration does not exist (deleted or not deployed)');
        else if (tlsNode.valid === false) problems.push(`TLS configuration '${tlsNode.name || tlsNode.id}' cannot be used: its certificate, key or CA file could not be read (see the log)`);
        else if (/^redis\+(sentinel|cluster):/i.test(url)) problems.push('a TLS configuration is selected, but TLS is not supported with Sentinel or Cluster yet: clear the TLS configuration, or use one server with rediss://');
        else if (!url.startsWith('rediss:')) problems.push('a TLS configuration is selected but the Redis URL is not TLS: use rediss://');
        else tls = tlsNode.addTLSOptions({});
      }
      if (problems.length > 0) return undefined;
      return new RedisDedupeStore({
        url,
        username: node.credentials?.user || undefined,
        password: node.credentials?.password || undefined,
        tls,
        prefix,
        onPersistence: (found) => persistence(describeRedis(url), found),
      });
    }

    /** What the Redis server keeps on disk: in the log; on the consumers' statuses when nothing. */
    function persistence(name: string, found: RedisPersistence): void {
      const keeps = redisKeeps(found);
      const text = t(`retry-dedupe.persistence.${keeps}`, { store: name, save: found.save ?? '', fsync: found.appendfsync ?? '?' });
      if (keeps === 'aof') node.log(text);
      else node.warn(text);
      node.forgetsOnRestart = keeps === 'nothing';
      // Its users (consumers) show their status again, with this fact.
      for (const user of users.all.values()) user.status({});
    }

    function postgresStore(): DedupeStore | undefined {
      const pg = findPostgres(RED, def.postgres);
      database = pg;
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

    const asUser = { id: node.id, status: () => undefined };
    database?.register(asUser);
    node.register = (user) => {
      users.add(user);
    };
    node.deregister = (user) => {
      users.remove(user);
      return Promise.resolve();
    };
    node.on('close', (_removed, done) => {
      // Consumers still draining record or release their keys here: close once they are done.
      void users
        .whenUnused()
        .then(() => store?.close())
        .then(() => database?.deregister(asUser))
        .then(done, done);
    });
  }
  RED.nodes.registerType('retry-dedupe', RetryDedupe as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
