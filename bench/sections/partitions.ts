/** Ordered throughput with a 5 ms downstream: one queue against 8 partitions (lib/partitions.ts); first how evenly keys spread over them (lib/partition-spread.ts). */
import { runPartitions } from '../lib/partitions';
import { measureKeySpread } from '../lib/partition-spread';
import { PLAN, REPS, log } from '../config';
import type { Bench } from '../types';

export async function partitions(b: Bench): Promise<void> {
  const { ctx, model, names } = b;
  const spread = await measureKeySpread(model, names, log);
  b.results.extra.partitions = { spread, one: [], partitioned: [], counts: PLAN.partitions };
  b.results.extra.partitions = { ...(await runPartitions({ ctx, model, one: names.topology('ordered1'), partitioned: names.topology('ordered8'), counts: PLAN.partitions, reps: REPS, log })), spread };
}
