/** Ordered throughput with a 5 ms downstream: one queue against 8 partitions (lib/partitions.ts). */
import { runPartitions } from '../lib/partitions';
import { PLAN, REPS, log } from '../config';
import type { Bench } from '../types';

export async function partitions(b: Bench): Promise<void> {
  const { ctx, model, names } = b;
  b.results.extra.partitions = await runPartitions({ ctx, model, one: names.topology('ordered1'), partitioned: names.topology('ordered8'), counts: PLAN.partitions, reps: REPS, log });
}
