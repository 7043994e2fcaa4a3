/**
 * What a Redis server keeps on disk (issue 28): read from `INFO persistence` and CONFIG GET, and what
 * the consumer's status says when it keeps nothing.
 */
import assert from 'node:assert/strict';
import { parsePersistence, redisKeeps } from '../../../src/lib/dedupe';
import { sessionStatus } from '../../../src/nodes/retry-consumer/consumer-status';
import { translator } from '../../../src/nodes/shared/i18n';

const info = (aof: 0 | 1): string => `# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:950\r\nrdb_saves:0\r\naof_enabled:${aof}\r\naof_rewrite_in_progress:0\r\n`;

describe('Redis persistence', () => {
  it('AOF on: keeps every processed key, up to appendfsync', () => {
    const p = parsePersistence(info(1), ['save', '', 'appendfsync', 'everysec']);
    assert.deepEqual(p, { aof: true, save: '', appendfsync: 'everysec' });
    assert.equal(redisKeeps(p), 'aof');
  });

  it('no AOF, no snapshot rules: keeps nothing', () => {
    const p = parsePersistence(info(0), ['save', '', 'appendfsync', 'everysec']);
    assert.equal(redisKeeps(p!), 'nothing');
  });

  it('no AOF, snapshot rules: keeps the last snapshot', () => {
    const p = parsePersistence(info(0), ['save', '3600 1 300 100 60 10000']);
    assert.deepEqual(p, { aof: false, save: '3600 1 300 100 60 10000' });
    assert.equal(redisKeeps(p), 'snapshots');
  });

  it('no AOF and CONFIG GET refused (a managed server): unknown, never "nothing"', () => {
    const p = parsePersistence(info(0), undefined);
    assert.deepEqual(p, { aof: false });
    assert.equal(redisKeeps(p), 'unknown');
    assert.equal(redisKeeps(parsePersistence(info(1), undefined)!), 'aof', 'AOF on says enough');
  });

  it('an INFO text without aof_enabled says nothing', () => {
    assert.equal(parsePersistence('# Persistence\r\nloading:0\r\n', ['save', '']), undefined);
    assert.equal(parsePersistence('', undefined), undefined);
  });

  it("the consumer's status: yellow and says it while the store keeps nothing", () => {
    const t = translator({ _: (key: string) => key });
    const stats = { inFlight: 0, acked: 1, retried: 0, parked: 0, duplicates: 0, parkingDepth: 0, argumentsUnchecked: false, rateLimited: 0 };
    const context = { blockedBy: undefined, store: 'redis 127.0.0.1:6391', circuit: undefined, rateLimit: 0 };
    assert.deepEqual(sessionStatus({ phase: 'consuming' }, stats as never, t, { ...context, storeForgets: true }), {
      fill: 'yellow',
      shape: 'dot',
      text: '✓1 ↻0 ⚑0 · 0 in flight · dedup keys forgotten on restart',
    });
    assert.equal(sessionStatus({ phase: 'consuming' }, stats as never, t, context)?.fill, 'green');
  });
});
