/**
 * The bench's scale section (issue 19, item 7): how the package behaves with many consumers, many
 * processes, big messages and a deep backlog. Not a raw-vs-package pair like the rest of the bench:
 * each part measures the package itself, as a user runs it.
 *
 * - consumers: 1 / 10 / 100 / 300 retry-consumers (each on its own queue, its retry topology
 *   declared, each → its own retry-settle ack) in ONE Node-RED process on one broker connection: time
 *   from deploy until every queue has its consumer, RSS per consumer after a full GC, idle CPU of the
 *   Node-RED process and of the broker, and how often the process looks at queues when idle (the
 *   parking watch and the stats events, both every WATCH_S s, must be one look per tick per broker).
 * - competing: 1, 2 and 4 Node-RED processes consuming one preloaded queue: total throughput.
 * - big messages: 1 MB and 20 MB, consumed (consumer → retry-settle ack) and published (retry-publish
 *   with confirms), in the bench's own Node-RED runtime, next to raw amqplib doing the same.
 * - backlog: 1 000 000 persistent 1 KB messages drained at prefetch 100, RSS sampled every second.
 *
 * The Node-RED processes are real ones (Node-RED of the repository's node_modules, red.js, settings.js
 * written by test/helpers/node-red-process.ts) with the package from dist/ linked into their user
 * directory, and scale-probe.cjs preloaded: it counts consume-oks, deliveries, settles, passive queue
 * checks, channel opens and HTTP requests, and reports them (after a full GC when asked) to a file.
 */
import { nodeRed4 } from '../../test/e2e/node-red-runtimes';
import { MANAGEMENT_URL, waitFor } from '../../test/helpers/broker';
import { tab, type Names } from '../../test/helpers/flows';
import type { NodeRedLaunch } from '../../test/helpers/node-red-process';
import { brokerCpuUs, errorText, median, purge, sleep, waitForCount } from './common';
import type { FlowNode } from './nodered';
import { backlogPart, bigPart, fastPreload } from './scale-big';
import { allConsuming, brokerFlowNode, deleteQueues, idleWindow, oneConsumerFlow, ProbedRed, wallNow, type Report } from './scale-red';
import { MB, WATCH_S, type ConsumersRow, type ScaleOptions, type ScaleResult } from './scale-table';
import * as S from './scenarios';

export { scaleJson, scaleTable } from './scale-table';
export type { BacklogResult, BigRow, CompetingRow, ConsumersRow, ScaleOptions, ScaleResult } from './scale-table';

// ------------------------------------------------------------------------------------------------
// Flows

/** `n` consumers, each on its own topology, each → its own retry-settle ack; `busyWatch`: parking watch and stats every WATCH_S s. */
function consumersFlow(url: string, topologies: Names[], busyWatch: boolean): FlowNode[] {
  const flow: FlowNode[] = [tab(), brokerFlowNode(url, MANAGEMENT_URL)];
  for (const [i, topo] of topologies.entries()) {
    flow.push(
      { ...S.benchConfig(topo), id: `config-${i}` },
      busyWatch
        ? S.benchConsumer([[`ack-${i}`], []], 10, { id: `consumer-${i}`, config: `config-${i}`, y: 40 + i * 40, parkingWatch: String(WATCH_S), events: true, statsEvery: String(WATCH_S) })
        : S.benchConsumer([[`ack-${i}`]], 10, { id: `consumer-${i}`, config: `config-${i}`, y: 40 + i * 40 }),
      { ...S.settleNode(`ack-${i}`, 'ack'), x: 400, y: 40 + i * 40 },
    );
  }
  return flow;
}

// ------------------------------------------------------------------------------------------------
// Parts

async function consumersPart(o: ScaleOptions, launch: NodeRedLaunch, result: ScaleResult): Promise<void> {
  const sizes = (o.smoke ? [1, 10] : [1, 10, 100, 300]).map((n) => ({ n, busyWatch: false }));
  if (!o.smoke) sizes.push({ n: sizes.at(-1)!.n, busyWatch: true });
  const windowS = o.smoke ? 5 : 20;
  if (!o.smoke) {
    // The broker's own idle CPU (and whatever else uses it: the machine may be shared), for comparison.
    const broker0 = brokerCpuUs();
    await sleep(windowS * 1000);
    result.brokerBaselineCpuPct = (brokerCpuUs() - broker0) / 1e4 / windowS;
    o.log(`   scale: broker CPU with no bench consumer: ${result.brokerBaselineCpuPct.toFixed(2)} %`);
  }
  let rss1: number | undefined;
  for (const { n, busyWatch } of sizes) {
    const topologies = Array.from({ length: n }, (_v, i) => o.names.topology(`scale${n}${busyWatch ? 'w' : ''}-${i}`));
    const queues = topologies.flatMap((t) => [t.mainQueue, t.retryQueue, t.parkingQueue]);
    const red = await ProbedRed.start(launch);
    try {
      await red.report({ reset: true });
      const t0 = wallNow();
      await red.deploy(consumersFlow(o.ctx.url, topologies, busyWatch));
      const seenAt = await allConsuming(
        o.ctx.model,
        topologies.map((t) => t.mainQueue),
        red,
        60_000 + n * 500,
      );
      const started = await red.report();
      const startS = (Math.min(seenAt, started.lastConsumeOkAt || seenAt) - t0) / 1000;
      await sleep(o.smoke ? 1000 : 3000); // the first looks and status updates after the start
      const mem = await red.report({ gc: true });
      const before = await red.report();
      const idle = await idleWindow(red.pid, windowS);
      const after = await red.report();
      rss1 ??= mem.rss;
      const row: ConsumersRow = {
        consumers: n,
        busyWatch,
        startS,
        rssMb: mem.rss / MB,
        rssPerConsumerMb: n > 1 && !busyWatch ? (mem.rss - rss1) / MB / (n - 1) : undefined,
        idleCpuPct: idle.cpuPct,
        brokerIdleCpuPct: idle.brokerPct,
        looksPerSec: (after.channelOpens - before.channelOpens) / idle.seconds,
        checksPerSec: (after.checkQueue - before.checkQueue) / idle.seconds,
        httpPerSec: (after.httpRequests - before.httpRequests) / idle.seconds,
        windowS: idle.seconds,
      };
      result.consumers.push(row);
      o.log(
        `   scale ${n} consumer(s)${busyWatch ? `, parking watch + stats every ${WATCH_S} s` : ''}: all consuming ${startS.toFixed(2)} s after deploy, rss ${row.rssMb.toFixed(1)} MiB${row.rssPerConsumerMb === undefined ? '' : ` (${row.rssPerConsumerMb.toFixed(3)} MiB each)`}, idle CPU ${row.idleCpuPct.toFixed(2)} %, broker ${row.brokerIdleCpuPct.toFixed(2)} %, ${row.looksPerSec.toFixed(2)} looks/s, ${row.checksPerSec.toFixed(1)} queue checks/s, ${row.httpPerSec.toFixed(2)} HTTP/s`,
      );
    } finally {
      await red.stop();
      await deleteQueues(o.ctx.model, queues).catch((err: unknown) => o.log(`   scale: deleting queues: ${errorText(err)}`));
    }
  }
}

/** Preloads `count` persistent messages, deploys the consumer flow to every process at once, waits until all are acked. */
async function competingRun(o: ScaleOptions, reds: ProbedRed[], topo: Names, count: number, body: Buffer): Promise<number> {
  await purge(o.ctx.model, topo.mainQueue);
  await fastPreload(o.ctx.model, topo.mainQueue, count, body);
  await waitForCount(o.ctx.model, topo.mainQueue, count);
  await sleep(o.smoke ? 0 : 300);
  for (const red of reds) await red.report({ reset: true });
  await Promise.all(reds.map((red) => red.deploy(oneConsumerFlow(o.ctx.url, topo, 100))));
  let reports: Report[] = [];
  await waitFor(
    async () => {
      reports = await Promise.all(reds.map((red) => red.report()));
      return reports.reduce((sum, r) => sum + r.deliveries, 0) >= count && reports.every((r) => r.deliveries === 0 || r.lastSettleAt > 0);
    },
    `${count} deliveries over ${reds.length} process(es)`,
    S.timeoutFor(count),
  );
  // Every delivery seen: let the last acks go out, then read the last settle times.
  await sleep(300);
  reports = await Promise.all(reds.map((red) => red.report()));
  await waitForCount(o.ctx.model, topo.mainQueue, 0);
  const first = Math.min(...reports.filter((r) => r.firstDeliveryAt > 0).map((r) => r.firstDeliveryAt));
  const last = Math.max(...reports.map((r) => r.lastSettleAt));
  await Promise.all(reds.map((red) => red.deploy([tab()])));
  const delivered = reports.reduce((sum, r) => sum + r.deliveries, 0);
  return delivered / ((last - first) / 1000);
}

async function competingPart(o: ScaleOptions, launch: NodeRedLaunch, result: ScaleResult): Promise<ProbedRed[]> {
  const sizes = o.smoke ? [1, 2] : [1, 2, 4];
  const count = o.smoke ? 2000 : 30_000;
  const reps = o.smoke ? 1 : Math.min(3, o.reps);
  const topo = o.names.topology('scale-compete');
  await S.declareTopology(o.ctx, topo);
  const body = Buffer.from(JSON.stringify(o.ctx.body1k));
  const reds = await Promise.all(Array.from({ length: Math.max(...sizes) }, () => ProbedRed.start(launch)));
  try {
    const runs = new Map(sizes.map((p) => [p, [] as number[]]));
    for (let rep = 0; rep < reps; rep += 1) {
      for (const p of sizes) {
        const msgPerSec = await competingRun(o, reds.slice(0, p), topo, count, body);
        runs.get(p)!.push(msgPerSec);
        o.log(`   scale competing ${p} process(es) #${rep + 1}: ${Math.round(msgPerSec)} msg/s`);
      }
    }
    for (const p of sizes) result.competing.push({ processes: p, count, msgPerSec: median(runs.get(p)!), runs: runs.get(p)!.map((x) => Math.round(x)) });
    await deleteQueues(o.ctx.model, [topo.mainQueue, topo.retryQueue, topo.parkingQueue]).catch(() => undefined);
    return reds;
  } catch (err) {
    await Promise.all(reds.map((red) => red.stop()));
    throw err;
  }
}

/** The whole section; `result` fills as parts finish (a failing part leaves the others' rows). */
export async function runScale(o: ScaleOptions, result: ScaleResult): Promise<void> {
  const launch = await nodeRed4.prepare();
  const step = async (name: string, work: () => Promise<void>): Promise<void> => {
    const t0 = Date.now();
    try {
      await work();
    } catch (err) {
      result.notes.push(`${name} failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      o.log(`!! scale ${name}: ${errorText(err)}`);
    }
    o.log(`   (scale ${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  };
  await step('consumers', () => consumersPart(o, launch, result));
  let reds: ProbedRed[] = [];
  await step('competing', async () => {
    reds = await competingPart(o, launch, result);
  });
  try {
    await step('big messages', () => bigPart(o, result));
    await step('backlog', async () => backlogPart(o, reds[0] ?? (reds = [await ProbedRed.start(launch)])[0]!, result));
  } finally {
    await Promise.all(reds.map((red) => red.stop()));
  }
  if (result.notes.length > 0) throw new Error(result.notes.join('; '));
}
