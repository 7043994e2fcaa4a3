/**
 * What a Redis server keeps on disk, read at start: `INFO persistence` (whether the append-only file
 * is on) and, where the server allows `CONFIG GET`, its snapshot rules and `appendfsync`. A server
 * that keeps nothing forgets every processed key on a restart, and every copy that arrives after one
 * is processed again. Pure.
 */

export interface RedisPersistence {
  /** The append-only file is on (`aof_enabled:1`). */
  aof: boolean;
  /** `appendfsync` (`always`, `everysec`, `no`); undefined when CONFIG GET is refused. */
  appendfsync?: string;
  /** The RDB snapshot rules (`save`, '' for none); undefined when CONFIG GET is refused. */
  save?: string;
}

/**
 * What survives a restart: `aof` (every processed key, up to `appendfsync`), `snapshots` (the keys
 * of the last snapshot), `nothing`, or `unknown` (no AOF, and the snapshot rules cannot be read).
 */
export type RedisKeeps = 'aof' | 'snapshots' | 'nothing' | 'unknown';

/** Reads `INFO persistence` and CONFIG GET's pairs; undefined when the INFO text does not say whether AOF is on. */
export function parsePersistence(info: string, config: readonly string[] | undefined): RedisPersistence | undefined {
  const aof = /^aof_enabled:(\d+)\s*$/m.exec(info);
  if (!aof) return undefined;
  const persistence: RedisPersistence = { aof: aof[1] !== '0' };
  const pairs = config ?? [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const [name, value] = [pairs[i], pairs[i + 1]];
    if (name === 'save') persistence.save = value;
    else if (name === 'appendfsync') persistence.appendfsync = value;
  }
  return persistence;
}

export function redisKeeps(p: RedisPersistence): RedisKeeps {
  if (p.aof) return 'aof';
  if (p.save === undefined) return 'unknown';
  return p.save.trim() === '' ? 'nothing' : 'snapshots';
}
