/**
 * The Node-RED side of the memory benchmark, in its own process (started by run.mjs with
 * --expose-gc and an IPC channel): consumer → retry-settle(ack) on BENCH_MEM_QUEUE. The parent
 * publishes; this process only consumes, and reports memory after a full GC when asked.
 *
 * Messages from the parent: {cmd:'snapshot'} → {type:'snapshot', mem}; {cmd:'wait', acks:n} →
 * {type:'acked', acks} once n acks were written; {cmd:'exit'}.
 */
import { armProbe, connect, fullGc, installProbe, probeCounts, sleep } from './lib/common.mjs';
import { brokerNode, configNode, consumerNode, loadFlow, tab, unloadFlow } from './lib/nodered.mjs';

const topo = JSON.parse(process.env.BENCH_MEM_TOPOLOGY ?? '{}');
const prefetch = Number(process.env.BENCH_MEM_PREFETCH ?? '100');
const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

function snapshot() {
  fullGc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
}

async function main() {
  // The probe counts acks; it needs one amqplib channel to find the class it wraps.
  const model = await connect('bench memory probe');
  installProbe(await model.createChannel());
  await model.close();
  armProbe(Infinity);
  await loadFlow([
    tab(),
    brokerNode(url),
    configNode(topo),
    consumerNode([['ack']], prefetch),
    { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', reason: 'bench', wires: [] },
  ]);
  process.on('message', (m) => {
    void (async () => {
      if (m.cmd === 'snapshot') {
        await sleep(200); // let the last acks' writes and timers settle
        process.send({ type: 'snapshot', mem: snapshot() });
      } else if (m.cmd === 'wait') {
        while (probeCounts().acks < m.acks) await sleep(20);
        process.send({ type: 'acked', acks: probeCounts().acks });
      } else if (m.cmd === 'exit') {
        await unloadFlow();
        process.exit(0);
      }
    })().catch((err) => {
      process.send({ type: 'error', error: String(err?.stack ?? err) });
    });
  });
  process.send({ type: 'ready' });
}

main().catch((err) => {
  process.send?.({ type: 'error', error: String(err?.stack ?? err) });
  process.exit(1);
});
