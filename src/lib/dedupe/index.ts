/**
 * dedupe — the idempotent consumer: a store of processed message keys (claim with a lease, complete,
 * release; in memory, Redis or PostgreSQL) and the gate a consumer admits each delivery through (its
 * store calls batched per turn, its waiting copies on one recheck schedule, its probe of a store that is down).
 */
export { DedupeGate, type Admission, type DedupeGateEvents, type DedupeGateOptions, type DedupeKeyResult, type StoreDownPolicy } from './gate';
export { keyFromValue, messageIdKey } from './keys';
export { MemoryDedupeStore, type MemoryStoreOptions } from './memory-store';
export { DEDUPE_COLUMNS, DEDUPE_INDEXES, dedupeTableDdl, PostgresDedupeStore, type DedupeDatabase, type PostgresStoreOptions } from './postgres-store';
export { RecheckSchedule, systemTimer, type Timer } from './recheck';
export { redisStoreError, unreachableWhy } from './redis-errors';
export { parsePersistence, redisKeeps, type RedisKeeps, type RedisPersistence } from './redis-persistence';
export { RedisDedupeStore, type RedisStoreSettings } from './redis-store';
export { describeRedis, parseRedisUrl, redisPrefixProblem, redisUrlProblem, type RedisAddress, type RedisTarget } from './redis-url';
export { DedupeStoreError, type ClaimResult, type DedupeKey, type DedupeStore, type DedupeStoreProblem, type StoreExchange, type SyncDedupeStore } from './store';
export { type SweepOptions } from './table-sweep';
