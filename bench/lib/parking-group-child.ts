/**
 * The Node-RED side of the parking-groups benchmark, in its own process (started by parking-group.ts
 * with --expose-gc and an IPC channel): the package's nodes in the bench's Node-RED runtime, a
 * park-replay node with the `groups` action on the parking queue in BENCH_PG_TOPOLOGY. It groups the
 * queue once and reports the time and the process's RSS: after a full GC before, and the peak,
 * sampled every 10 ms, while grouping. Then it exits.
 */
import { tab } from '../../test/helpers/flows';
import type { Names } from '../../test/helpers/flows';
import { AMQP_URL, errorText, fullGc, sleep } from './common';
import { benchHooks, getNode, loadFlow, unloadFlow, type Msg } from './nodered';
import { benchBroker, benchConfig } from './scenarios';

const topo = JSON.parse(process.env.BENCH_PG_TOPOLOGY ?? '{}') as Names;

async function main(): Promise<void> {
  await loadFlow([
    tab(),
    benchBroker({ url: AMQP_URL }),
    benchConfig(topo),
    { id: 'groups', type: 'park-replay', z: 'flow', config: 'config', action: 'groups', wires: [['sink']] },
    { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] },
  ]);
  await sleep(500);
  fullGc();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const result = new Promise<Msg>((resolve) => {
    benchHooks.onSink = (msg) => resolve(msg);
  });
  const started = process.hrtime.bigint();
  getNode('groups').receive({});
  const msg = await result;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const payload = msg.payload as { grouped?: number; groups?: unknown[] };
  process.send?.({ type: 'result', seconds, rssBefore: before, rssPeak: peak, grouped: payload.grouped ?? 0, groups: payload.groups?.length ?? 0 });
  await unloadFlow();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.send?.({ type: 'error', error: errorText(err) });
    process.exit(1);
  },
);
