/** The retry path: nack → retry queue (200 ms TTL) → main queue → ack, throughput as a pair, then the lag beyond the TTL. */
import type { Names } from '../../test/helpers/flows';
import { median, percentile, purge } from '../lib/common';
import * as S from '../lib/scenarios';
import { PLAN, PREFETCH, REPS, TTL_MS, log } from '../config';
import { pair } from '../harness';
import type { Bench, LagStats } from '../types';

async function throughput(b: Bench, topo: Names): Promise<void> {
  const { ctx, load } = b;
  const count = PLAN.retry;
  // Warm-up of the retry path's own code (dead-letter settles, x-death reading), not recorded:
  // the consume section's warm-up does not reach it, and a cold first run is JIT, not per message.
  for (const side of ['raw-batched', 'nodered', 'pkg'] as const) {
    await load(topo, 1024, PLAN.warmup)();
    await S.retryThroughput(ctx, side, { topo, count: PLAN.warmup, prefetch: PREFETCH });
  }
  await pair(
    b.results,
    'retry path',
    '1 KB, prefetch 100, 1 retry',
    count,
    load(topo, 1024, count),
    () => S.retryThroughput(ctx, 'raw', { topo, count, prefetch: PREFETCH }),
    () => S.retryThroughput(ctx, 'pkg', { topo, count, prefetch: PREFETCH }),
    undefined,
    () => S.retryThroughput(ctx, 'raw-batched', { topo, count, prefetch: PREFETCH }),
    () => S.retryThroughput(ctx, 'nodered', { topo, count, prefetch: PREFETCH }),
  );
}

/** Nack → redelivery − TTL at a rate well below capacity, raw and package alternating; the median of each figure over the repetitions. */
async function lag(b: Bench, topo: Names): Promise<void> {
  const { ctx, model } = b;
  const { count: lagCount, rate } = PLAN.lag;
  const stats = (values: number[]): LagStats => ({ p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) });
  const perRep: { raw: LagStats[]; pkgAmqp: LagStats[]; pkgFlow: LagStats[] } = { raw: [], pkgAmqp: [], pkgFlow: [] };
  for (let rep = 0; rep < REPS; rep += 1) {
    await purge(model, topo.mainQueue);
    const raw = await S.retryLag(ctx, 'raw', { topo, count: lagCount, rate, prefetch: PREFETCH, ttlMs: TTL_MS, tag: `raw${rep}` });
    perRep.raw.push(stats(raw.amqpLag));
    await purge(model, topo.mainQueue);
    const pkg = await S.retryLag(ctx, 'pkg', { topo, count: lagCount, rate, prefetch: PREFETCH, ttlMs: TTL_MS, tag: `pkg${rep}` });
    perRep.pkgAmqp.push(stats(pkg.amqpLag));
    perRep.pkgFlow.push(stats(pkg.flowLag));
    const r = perRep.raw.at(-1)!;
    const f = perRep.pkgFlow.at(-1)!;
    log(`   retry lag #${rep + 1}: raw p50 ${r.p50.toFixed(1)} p99 ${r.p99.toFixed(1)} ms; package (flow) p50 ${f.p50.toFixed(1)} p99 ${f.p99.toFixed(1)} ms (${pkg.flowLag.length} samples)`);
  }
  const med = (list: LagStats[]): LagStats => ({ p50: median(list.map((s) => s.p50)), p99: median(list.map((s) => s.p99)), max: median(list.map((s) => s.max)) });
  b.results.extra.lag = { count: lagCount, rate, raw: med(perRep.raw), pkgAmqp: med(perRep.pkgAmqp), pkgFlow: med(perRep.pkgFlow) };
}

export async function retry(b: Bench): Promise<void> {
  const topo = b.names.topology('retry');
  await S.declareTopology(b.ctx, topo);
  await throughput(b, topo);
  await lag(b, topo);
}
