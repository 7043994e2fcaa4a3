/**
 * The Redis store's client for what its URL names: one server, a master found through Sentinel, or a
 * Redis Cluster. In every mode a command while disconnected fails at once (the gate stops consuming,
 * it never waits blindly) and the connection is retried in the background.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './redis-url';

export interface RedisClientSettings {
  username?: string;
  password?: string;
  tls?: Record<string, unknown>;
  timeoutMs: number;
}

export type RedisClient = Redis | Cluster;

export function createRedisClient(target: RedisTarget, settings: RedisClientSettings): RedisClient {
  const common: RedisOptions = {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: settings.timeoutMs,
    commandTimeout: settings.timeoutMs,
    connectionName: 'node-red-rabbitmq-retry',
  };
  // The fields win over the URL's login.
  const username = settings.username || (target.mode === 'single' ? undefined : target.username);
  const password = settings.password || (target.mode === 'single' ? undefined : target.password);
  if (username) common.username = username;
  if (password) common.password = password;
  const retry = (times: number): number => Math.min(times * 500, 5000);
  if (target.mode === 'cluster') {
    const options: ClusterOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: retry,
      // A moved slot (a failover) is asked again a few times before the call fails.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      slotsRefreshTimeout: settings.timeoutMs,
      redisOptions: common,
    };
    return new Cluster(target.nodes, options);
  }
  const options: RedisOptions = { ...common, enableOfflineQueue: false, retryStrategy: retry };
  if (target.mode === 'sentinel') {
    return new Redis({
      ...options,
      sentinels: target.sentinels,
      name: target.name,
      db: target.db,
      role: 'master',
      sentinelRetryStrategy: retry,
      sentinelCommandTimeout: settings.timeoutMs,
      // Told by the sentinels when the master changes, rather than only when the old one stops answering.
      failoverDetector: true,
    });
  }
  if (settings.tls) options.tls = settings.tls;
  return new Redis(target.url, options);
}

/** The servers whose INFO says what is kept on disk: the one server, the master, or each cluster master. */
export function dataServers(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}
