/**
 * The consuming side of the memory benchmark, in its own process (started by run.ts with
 * --expose-gc and an IPC channel): consumer → retry-settle(ack) on the topology in
 * BENCH_MEM_TOPOLOGY, or with BENCH_MEM_MODE=raw a raw amqplib consumer doing the same work (the
 * same msg, acked one turn later as a flow does, acks batched as the package batches them) for comparison,
 * or with BENCH_MEM_MODE=nodered that raw consumer in the same Node-RED runtime with its msg through
 * one Node-RED hop (bench-source → bench-sink, acked there): Node-RED's share of the memory, no package
 * node in the flow. The parent publishes; this process
 * only consumes, and reports memory after a full GC when asked.
 *
 * Messages from the parent: {cmd:'snapshot'} → {type:'snapshot', mem}; {cmd:'wait', acks:n} →
 * {type:'acked', acks} once n acks were written; {cmd:'exit'}.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { rawHandler } from './raw-consumer.cjs';
import type { Names } from '../../test/helpers/flows';
import { tab } from '../../test/helpers/flows';
import { AMQP_URL, armProbe, connect, errorText, fullGc, installProbe, probeCounts, sleep } from './common';
import { loadFlow, unloadFlow } from './nodered';
import { batchedAcks, startThroughNodeRed } from './nodered-alone';
import { benchBroker, benchConfig, benchConsumer } from './scenarios';

const topo = JSON.parse(process.env.BENCH_MEM_TOPOLOGY ?? '{}') as Names;
const prefetch = Number(process.env.BENCH_MEM_PREFETCH ?? '100');
const mode = process.env.BENCH_MEM_MODE ?? 'package';

function snapshot(): Record<string, number> {
  fullGc();
  const m = process.memoryUsage();
  // V8 grows the young generation under a high allocation rate and keeps it committed: its physical
  // size is the part of the RSS growth that is V8's sizing, whatever the process allocates.
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, newSpace: space?.space_size ?? 0, newSpacePhysical: space?.physical_space_size ?? 0 };
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
  let consumer: { close(): Promise<void> } | undefined;
  let flowLoaded = false;
  if (mode === 'nodered') {
    // The same Node-RED-alone consumer as the timed pairs' (nodered-alone.ts); its stop unloads the flow.
    const stop = await startThroughNodeRed({ queue: topo.mainQueue, prefetch, hops: 1, settler: batchedAcks });
    consumer = { close: stop };
  } else if (mode === 'raw') {
    const rawModel = await connect('bench memory raw consumer');
    const ch = await rawModel.createChannel();
    await ch.prefetch(prefetch);
    await ch.consume(topo.mainQueue, rawHandler(ch, topo.mainQueue, 'msg-later-batched'), { noAck: false });
    consumer = rawModel;
  } else {
    await loadFlow([
      tab(),
      benchBroker({ url: AMQP_URL }),
      benchConfig(topo),
      benchConsumer([['ack']], prefetch),
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', reason: 'bench', wires: [] },
    ]);
    flowLoaded = true;
  }
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
        if (consumer) await consumer.close();
        if (flowLoaded) await unloadFlow();
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
