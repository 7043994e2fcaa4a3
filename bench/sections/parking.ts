/** Parking groups: a park-replay node grouping a full parking queue, in a Node-RED process of its own (lib/parking-group.ts). */
import { purge } from '../lib/common';
import { parkingGroupRun } from '../lib/parking-group';
import * as S from '../lib/scenarios';
import { MB, PLAN, log } from '../config';
import type { Bench } from '../types';

export async function parking(b: Bench): Promise<void> {
  const { ctx, model, names } = b;
  const topo = names.topology('pgroup');
  await S.declareTopology(ctx, topo);
  const g = await parkingGroupRun(model, topo, PLAN.parkingGroup, b.body(1024), log);
  b.results.extra.parkingGroup = g;
  log(`   parking groups: ${g.count} grouped in ${g.seconds.toFixed(2)} s, Node-RED rss peak ${(g.rssPeak / MB).toFixed(1)} MiB (+${((g.rssPeak - g.rssBefore) / MB).toFixed(1)})`);
  await purge(model, topo.parkingQueue);
}
