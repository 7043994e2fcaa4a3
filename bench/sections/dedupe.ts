/**
 * Deduplication: the package consuming with a store (memory, Redis, PostgreSQL) against the package
 * without one, every key new; Redis and PostgreSQL also against a hand-written idempotent consumer.
 */
import { messageProperties } from '../lib/common';
import { rawDedupe } from '../lib/dedupe-raw';
import * as S from '../lib/scenarios';
import * as D from '../lib/store-scenarios';
import { PLAN, PREFETCH } from '../config';
import { pair } from '../harness';
import type { Bench } from '../types';

export async function dedupe(b: Bench): Promise<void> {
  const { ctx, names, loadQueue } = b;
  const why = await D.storesAnswer();
  if (why) throw new Error(`skipped: ${why}`);
  const topo = names.topology('dedupe');
  await S.declareTopology(ctx, topo);
  const count = PLAN.dedupe;
  for (const kind of ['memory', 'redis', 'postgres'] as const) {
    // Every run its own message ids: a key seen in an earlier run would be a duplicate.
    const prepFor = (n: number) => (): Promise<void> => {
      const run = Math.random().toString(36).slice(2, 8);
      return loadQueue(topo.mainQueue, 1024, n, (i) => ({ ...messageProperties(i), messageId: `${run}-${i}` }))();
    };
    const none = (n: number) => () => D.dedupeConsume(ctx, { topo, count: n, prefetch: PREFETCH, kind: 'none' });
    const withStore = (n: number) => () => D.dedupeConsume(ctx, { topo, count: n, prefetch: PREFETCH, kind });
    // Redis and PostgreSQL also against a careful hand-written idempotent consumer (raw amqplib + ioredis / pg, the same protocol).
    const byHand = (n: number) => (kind === 'memory' ? undefined : () => rawDedupe({ kind, queue: topo.mainQueue, count: n, prefetch: PREFETCH }));
    // Warm-up of each side (JIT, the store's code paths and connections), not recorded: the first timed run is not the cold one.
    for (const side of [none(PLAN.warmup), withStore(PLAN.warmup), byHand(PLAN.warmup)]) {
      if (!side) continue;
      await prepFor(PLAN.warmup)();
      await side();
    }
    await pair(b.results, 'dedupe', `${kind} vs none, 1 KB, prefetch ${PREFETCH}`, count, prepFor(count), none(count), withStore(count), undefined, byHand(count));
  }
}
