/**
 * The deduplication store in Redis, shared by several Node-RED instances: one server, a master found
 * through Sentinel, or a Redis Cluster (`redis-url.ts`). One key per record, `<prefix><scope>:<key>`
 * (the scope URI-encoded; in a cluster `<prefix>{<scope>}:<key>`, the scope a hash tag so that every
 * key of a batch — one scope — is in one slot): `c:<owner>` while claimed, with the lease as its
 * expiry; `d` once done, with the retention as its expiry. Each batch is one script call (claim,
 * release, or a turn's completes, releases and claims together) or one pipeline (complete): one
 * round trip, atomic per key. At its first start it reads
 * what the server keeps on disk (`redis-persistence.ts`; in a cluster, the master that keeps least)
 * and tells its owner.
 */
import type { Redis } from 'ioredis';
import { answeredByScope, byScope, commonScope, distinctNames } from './batch';
import { createRedisClient, dataServers, type RedisClient } from './redis-client';
import { redisStoreError } from './redis-errors';
import { parsePersistence, redisKeeps, type RedisPersistence } from './redis-persistence';
import { describeRedis, parseRedisUrl } from './redis-url';
import { answers, CLAIM, EXCHANGE, RELEASE, type Scripts } from './redis-scripts';
import type { ClaimResult, DedupeKey, DedupeStore, StoreExchange } from './store';

export interface RedisStoreSettings {
  /**
   * `redis://host:6379/0`, `rediss://...`, `redis+sentinel://host:26379,host:26380/mymaster` or
   * `redis+cluster://host:6379,host:6380`; a password in it is used but never shown.
   */
  url: string;
  username?: string;
  password?: string;
  /** TLS socket options (ca, cert, key, ...); a `rediss://` URL uses TLS with the defaults. */
  tls?: Record<string, unknown>;
  /** Prefix of every key; default `rabbitmq-retry:dedupe:`. */
  prefix?: string;
  /** How long a command or a connection attempt may take; default 5 s. */
  timeoutMs?: number;
  /** Told once, at the first start that answers, what the server keeps on disk (not told when it does not say). */
  onPersistence?: (persistence: RedisPersistence) => void;
}

export class RedisDedupeStore implements DedupeStore {
  readonly description: string;
  readonly maxKeyBytes = 4096;
  private readonly client: RedisClient;
  private readonly prefix: string;
  /** Keys hash-tagged by scope (a cluster). */
  private readonly tagged: boolean;
  private readonly timeoutMs: number;
  /** The connection's last error: a failed command says it rather than "stream not writeable". */
  private lastError: Error | undefined;
  /** The scope of the last key made, and its prefix part (see keyOf). */
  private lastScope: string | undefined;
  private scopePart = '';
  /** What the server keeps on disk, read once. */
  private persistenceRead: Promise<void> | undefined;

  constructor(private readonly settings: RedisStoreSettings) {
    this.description = describeRedis(settings.url);
    this.prefix = settings.prefix ?? 'rabbitmq-retry:dedupe:';
    const target = parseRedisUrl(settings.url);
    if ('problem' in target) throw new Error(target.problem);
    this.tagged = target.mode === 'cluster';
    this.timeoutMs = settings.timeoutMs ?? 5000;
    this.client = createRedisClient(target, { username: settings.username, password: settings.password, tls: settings.tls, timeoutMs: this.timeoutMs });
    this.client.on('error', (err: Error) => {
      this.lastError = err;
    });
    this.client.on('ready', () => {
      this.lastError = undefined;
    });
    this.client.defineCommand('dedupeClaim', { lua: CLAIM });
    this.client.defineCommand('dedupeRelease', { lua: RELEASE });
    this.client.defineCommand('dedupeExchange', { lua: EXCHANGE });
  }

  async prepare(): Promise<void> {
    if (this.client.status === 'wait') {
      // The first connection, at most the timeout: through Sentinel it is retried until a sentinel
      // answers, and the store says it cannot be reached meanwhile (the client goes on trying).
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(this.lastError ?? new Error('timed out')), this.timeoutMs);
      });
      await Promise.race([this.client.connect(), late])
        .catch((err: unknown) => {
          throw this.storeError(err);
        })
        .finally(() => clearTimeout(timer));
    }
    await this.ping();
    this.persistenceRead ??= this.readPersistence();
    await this.persistenceRead;
  }

  /**
   * What the server keeps on disk; undefined when it does not say (INFO refused or unlike Redis's).
   * A cluster: its master that keeps least.
   */
  async persistence(): Promise<RedisPersistence | undefined> {
    const found = await Promise.all(dataServers(this.client).map((server) => serverPersistence(server)));
    const rank = { nothing: 0, unknown: 1, snapshots: 2, aof: 3 } as const;
    let least: RedisPersistence | undefined;
    for (const p of found) if (p && (!least || rank[redisKeeps(p)] < rank[redisKeeps(least)])) least = p;
    return least;
  }

  async ping(): Promise<void> {
    await this.run(() => this.client.ping());
  }

  async claim(keys: readonly DedupeKey[], owner: string, leaseMs: number): Promise<ClaimResult[]> {
    if (this.severalSlots([keys])) return answeredByScope(byScope(keys), (scope, names) => this.claim(ofScope(scope, names), owner, leaseMs));
    const { unique, at } = distinctNames(keys.map((k) => this.keyOf(k)));
    const scripts = this.client as unknown as Scripts;
    const replies = await this.run(() => scripts.dedupeClaim(unique.length, ...unique, owner, Math.max(1, Math.round(leaseMs))));
    return answers(replies, at);
  }

  /** One script call: the completes, the releases, then the claims (a round trip instead of three). */
  async exchange(calls: StoreExchange): Promise<ClaimResult[]> {
    if (this.severalSlots([calls.complete, calls.release, calls.claim])) {
      await this.complete(calls.complete, calls.retentionMs);
      await this.release(calls.release, calls.owner);
      return this.claim(calls.claim, calls.owner, calls.leaseMs);
    }
    const { unique, at } = distinctNames(calls.claim.map((k) => this.keyOf(k)));
    const scripts = this.client as unknown as Scripts;
    // The script's arguments in one array: the number of keys, the keys, then its ARGV.
    const args: Array<string | number> = [calls.complete.length + calls.release.length + unique.length];
    for (const k of calls.complete) args.push(this.keyOf(k));
    for (const k of calls.release) args.push(this.keyOf(k));
    for (const key of unique) args.push(key);
    args.push(calls.complete.length, calls.release.length, calls.owner, Math.max(1, Math.round(calls.leaseMs)), Math.max(1, Math.round(calls.retentionMs)));
    const replies = await this.run(() => scripts.dedupeExchange(...args));
    return answers(replies, at);
  }

  async complete(keys: readonly DedupeKey[], retentionMs: number): Promise<void> {
    if (this.severalSlots([keys])) {
      for (const { scope, names } of byScope(keys)) await this.complete(ofScope(scope, names), retentionMs);
      return;
    }
    const pipeline = this.client.pipeline();
    for (const k of keys) pipeline.set(this.keyOf(k), 'd', 'PX', Math.max(1, Math.round(retentionMs)));
    const replies = await this.run(() => pipeline.exec());
    const failed = replies?.find(([err]) => err);
    if (failed?.[0]) throw this.storeError(failed[0]);
  }

  async release(keys: readonly DedupeKey[], owner: string): Promise<void> {
    if (this.severalSlots([keys])) {
      for (const { scope, names } of byScope(keys)) await this.release(ofScope(scope, names), owner);
      return;
    }
    const scripts = this.client as unknown as Scripts;
    await this.run(() => scripts.dedupeRelease(keys.length, ...keys.map((k) => this.keyOf(k)), owner));
  }

  async close(): Promise<void> {
    if (this.client.status === 'end' || this.client.status === 'wait') {
      this.client.disconnect();
      return;
    }
    await this.client.quit().catch(() => undefined);
    // QUIT ends the data connection only: the sentinel connection watching for a failover ends here.
    this.client.disconnect();
  }

  /** The Redis key of a record. In a cluster the scope is the hash tag (`%` for an empty one: `{}` tags nothing). */
  keyOf(k: DedupeKey): string {
    if (k.scope !== this.lastScope) {
      // A gate keeps one scope: its part of the key is worked out once, not per key.
      const scope = encodeURIComponent(k.scope);
      this.lastScope = k.scope;
      this.scopePart = this.tagged ? `${this.prefix}{${scope || '%'}}:` : `${this.prefix}${scope}:`;
    }
    return this.scopePart + k.key;
  }

  /**
   * Whether the keys of one call would be in several slots: in a cluster each scope is its own hash
   * tag, and a script or a pipeline takes the keys of one slot. Such a batch (never a gate's: it has
   * one scope) goes as one call per scope.
   */
  private severalSlots(lists: ReadonlyArray<readonly DedupeKey[]>): boolean {
    return this.tagged && commonScope(lists) === undefined && lists.some((keys) => keys.length > 0);
  }

  private async readPersistence(): Promise<void> {
    const found = await this.persistence().catch(() => undefined);
    if (found) this.settings.onPersistence?.(found);
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      throw this.storeError(err);
    }
  }

  private storeError(err: unknown): Error {
    return redisStoreError(this.description, err, this.lastError);
  }
}

/** The keys of one scope, by name. */
function ofScope(scope: string, names: readonly string[]): DedupeKey[] {
  return names.map((key) => ({ scope, key }));
}

/** What one server keeps on disk; undefined when it does not say. */
async function serverPersistence(server: Redis): Promise<RedisPersistence | undefined> {
  const info = await server.info('persistence').catch(() => undefined);
  if (info === undefined) return undefined;
  // CONFIG is often refused on managed servers: then the snapshot rules are unknown. (One name a
  // call: Redis before 7 takes one.)
  const get = (name: string): Promise<string[] | undefined> =>
    server.config('GET', name).then(
      (pairs: unknown) => (Array.isArray(pairs) ? pairs.map(String) : undefined),
      () => undefined,
    );
  const [save, appendfsync] = await Promise.all([get('save'), get('appendfsync')]);
  return parsePersistence(info, save && [...save, ...(appendfsync ?? [])]);
}
