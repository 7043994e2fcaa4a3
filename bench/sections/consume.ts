/** consume+ack: raw amqplib against the package (consumer → retry-settle), by body size and prefetch. */
import * as S from '../lib/scenarios';
import { PLAN, PREFETCH, kb } from '../config';
import { pair } from '../harness';
import type { Bench } from '../types';

export async function consume(b: Bench): Promise<void> {
  const { ctx, consumeTopo, load } = b;
  await S.declareTopology(ctx, consumeTopo);
  // Warm-up (JIT, connection code paths), not recorded.
  for (const run of [
    () => S.rawConsume(ctx, { queue: consumeTopo.mainQueue, count: PLAN.warmup, prefetch: PREFETCH }),
    () => S.pkgConsume(ctx, { topo: consumeTopo, count: PLAN.warmup, prefetch: PREFETCH }),
    () => S.nodeRedAloneConsume(ctx, { queue: consumeTopo.mainQueue, count: PLAN.warmup, prefetch: PREFETCH }),
  ]) {
    await load(consumeTopo, 1024, PLAN.warmup)();
    await run();
  }
  for (const { size, prefetch, count } of PLAN.consume) {
    await pair(
      b.results,
      'consume+ack',
      `${kb(size)}, prefetch ${prefetch}`,
      count,
      load(consumeTopo, size, count),
      () => S.rawConsume(ctx, { queue: consumeTopo.mainQueue, count, prefetch }),
      () => S.pkgConsume(ctx, { topo: consumeTopo, count, prefetch }),
      () => S.rawConsume(ctx, { queue: consumeTopo.mainQueue, count, prefetch, work: 'msg' }),
      () => S.rawConsume(ctx, { queue: consumeTopo.mainQueue, count, prefetch, work: 'msg-later-batched' }),
      () => S.nodeRedAloneConsume(ctx, { queue: consumeTopo.mainQueue, count, prefetch }),
    );
  }
}
