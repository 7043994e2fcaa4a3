/**
 * Runs the soak's schedule: each fault at its offset, one at a time per thing it hurts (a fault whose
 * thing is still hurt by an earlier one waits for it), each timed from its start to when what it hurt
 * is healed.
 */
import { pause, type BrokerNode } from '../faults/fault-broker';
import type { Pair } from '../faults/two-processes';
import type { PrivateServer } from '../helpers/private-stores';
import type { Downstream } from './downstream';
import type { SoakSentinel } from './sentinel';
import type { FaultRun } from './reconcile';
import type { StallProxy } from './stall-proxy';
import { resourceOf, type Resource, type ScheduledFault } from './schedule';

export interface Targets {
  broker: BrokerNode;
  cluster: BrokerNode;
  pair: Pair;
  redis: SoakSentinel;
  postgres: PrivateServer;
  downstream: Downstream;
  proxy: StallProxy;
  /** The flow both processes run, for a full redeploy. */
  flow: Record<string, unknown>[];
}

/** Stops something, waits, starts it again. */
async function downFor(ms: number, stop: () => Promise<void>, start: () => Promise<void>): Promise<void> {
  await stop();
  await pause(ms);
  await start();
}

/** Hurts what the fault names, and returns once it is healed. */
export async function inject(fault: ScheduledFault, t: Targets): Promise<void> {
  const i = fault.process ?? 0;
  switch (fault.kind) {
    case 'broker-restart':
      return downFor(fault.durationMs, () => t.broker.stopNode(), () => t.broker.startNode());
    case 'close-all':
      await t.broker.ctl('close_all_connections', 'soak');
      return;
    case 'sigkill':
      return downFor(fault.durationMs, () => t.pair.kill(i), () => t.pair.restart(i));
    case 'redeploy':
      await t.pair.processes[i]?.deploy(t.flow);
      return;
    case 'redis-restart':
      return t.redis.restartMaster(fault.durationMs);
    case 'redis-failover':
      return t.redis.failover();
    case 'cluster-node':
      return downFor(fault.durationMs, () => t.cluster.stopNode(), () => t.cluster.startNode());
    case 'postgres-restart':
      return downFor(fault.durationMs, () => t.postgres.stop(), () => t.postgres.start());
    case 'silent-connection':
      return t.proxy.stall(fault.durationMs);
    case 'downstream-503':
      t.downstream.fail(fault.durationMs);
      await pause(fault.durationMs);
      return;
  }
}

/** Runs every fault of the schedule from `t0`; resolves with each one's run once all are over. */
export async function runSchedule(schedule: readonly ScheduledFault[], t0: number, targets: Targets, log: (line: string) => void): Promise<FaultRun[]> {
  const busy = new Map<Resource, Promise<unknown>>();
  const runs = schedule.map(async (fault): Promise<FaultRun> => {
    await pause(Math.max(0, t0 + fault.at - Date.now()));
    const resource = resourceOf(fault);
    const before = busy.get(resource) ?? Promise.resolve();
    const run = before.then(async (): Promise<FaultRun> => {
      const start = Date.now();
      log(`+${((start - t0) / 1000).toFixed(0)} s: ${fault.kind}${fault.process === undefined ? '' : ` (Node-RED ${fault.process + 1})`} begins`);
      try {
        await inject(fault, targets);
        log(`+${((Date.now() - t0) / 1000).toFixed(0)} s: ${fault.kind} over (${((Date.now() - start) / 1000).toFixed(1)} s)`);
        return { fault, start, end: Date.now() };
      } catch (err) {
        const error = (err as Error).message.split('\n')[0];
        log(`+${((Date.now() - t0) / 1000).toFixed(0)} s: ${fault.kind} could not be injected: ${error}`);
        return { fault, start, end: Date.now(), error };
      }
    });
    busy.set(resource, run);
    return run;
  });
  return Promise.all(runs);
}
