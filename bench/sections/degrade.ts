/** Rate limit and kill switch: the rate reaching the flow at 200/s; five rules + the kill switch against none (lib/degrade-scenarios.ts). */
import { runDegrade } from '../lib/degrade-scenarios';
import * as S from '../lib/scenarios';
import { PLAN, PREFETCH, REPS, SMOKE, log } from '../config';
import type { Bench } from '../types';

export async function degrade(b: Bench): Promise<void> {
  const { ctx, names, load } = b;
  const topo = names.topology('degrade');
  await S.declareTopology(ctx, topo);
  await runDegrade({ smoke: SMOKE, reps: REPS, ctx, topo, prefetch: PREFETCH, warmup: PLAN.warmup, load: (count) => load(topo, 1024, count), log }, b.results.degrade);
}
