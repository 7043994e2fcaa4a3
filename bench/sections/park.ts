/** The park path: consumer → park-publisher against raw amqplib doing the same confirmed publish and ack. */
import { purge } from '../lib/common';
import * as S from '../lib/scenarios';
import { PLAN, PREFETCH } from '../config';
import { pair } from '../harness';
import type { Bench } from '../types';

export async function park(b: Bench): Promise<void> {
  const { ctx, model, names, load } = b;
  const topo = names.topology('park');
  await S.declareTopology(ctx, topo);
  const count = PLAN.park;
  const prep = async (): Promise<void> => {
    await purge(model, topo.parkingQueue);
    await load(topo, 1024, count)();
  };
  await pair(
    b.results,
    'park path',
    '1 KB, prefetch 100',
    count,
    prep,
    () => S.rawPark(ctx, { topo, count, prefetch: PREFETCH }),
    () => S.pkgPark(ctx, { topo, count, prefetch: PREFETCH }),
  );
  await purge(model, topo.parkingQueue);
}
