/**
 * The Node-RED side of the memory benchmark, in its own process (started by run.ts with
 * --expose-gc and an IPC channel): consumer → retry-settle(ack) on the topology in
 * BENCH_MEM_TOPOLOGY. The parent publishes; this process only consumes, and reports memory after a
 * full GC when asked.
 *
 * Messages from the parent: {cmd:'snapshot'} → {type:'snapshot', mem}; {cmd:'wait', acks:n} →
 * {type:'acked', acks} once n acks were written; {cmd:'exit'}.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import type { Names } from '../../test/helpers/flows';
import { tab } from '../../test/helpers/flows';
import { AMQP_URL, armProbe, connect, errorText, fullGc, installProbe, probeCounts, sleep } from './common';
import { loadFlow, unloadFlow } from './nodered';
import { benchBroker, benchConfig, benchConsumer } from './scenarios';

const topo = JSON.parse(process.env.BENCH_MEM_TOPOLOGY ?? '{}') as Names;
const prefetch = Number(process.env.BENCH_MEM_PREFETCH ?? '100');

function snapshot(): Record<string, number> {
  fullGc();
  const m = process.memoryUsage();
  // V8 grows the young generation under a high allocation rate and keeps it: part of the RSS growth.
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, newSpace };
}

const reply = (m: Record<string, unknown>): void => {
  process.send?.(m);
};

async function main(): Promise<void> {
  // The probe counts acks; it needs one amqplib channel to find the class it wraps.
  const model = await connect('bench memory probe');
  installProbe(await model.createChannel());
  await model.close();
  void armProbe(Infinity);
  await loadFlow([
    tab(),
    benchBroker({ url: AMQP_URL }),
    benchConfig(topo),
    benchConsumer([['ack']], prefetch),
    { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', reason: 'bench', wires: [] },
  ]);
  process.on('message', (message) => {
    const m = message as { cmd: string; acks?: number };
    void (async () => {
      if (m.cmd === 'snapshot') {
        await sleep(200); // let the last acks' writes and timers settle
        reply({ type: 'snapshot', mem: snapshot() });
      } else if (m.cmd === 'wait') {
        while (probeCounts().acks < (m.acks ?? 0)) await sleep(20);
        reply({ type: 'acked', acks: probeCounts().acks });
      } else if (m.cmd === 'exit') {
        await unloadFlow();
        process.exit(0);
      }
    })().catch((err: unknown) => {
      reply({ type: 'error', error: errorText(err) });
    });
  });
  reply({ type: 'ready' });
}

main().catch((err: unknown) => {
  reply({ type: 'error', error: errorText(err) });
  process.exit(1);
});
