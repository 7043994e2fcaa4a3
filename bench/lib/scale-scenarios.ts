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
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Channel, ChannelModel, Options } from 'amqplib';
import { nodeRed4 } from '../../test/e2e/node-red-runtimes';
import { MANAGEMENT_URL, waitFor } from '../../test/helpers/broker';
import { tab, type Names } from '../../test/helpers/flows';
import { NodeRedProcess, PACKAGE, type NodeRedLaunch } from '../../test/helpers/node-red-process';
import { brokerCpuUs, errorText, median, messageProperties, preload, purge, round, sleep, waitForCount, type NameBook, type RunResult } from './common';
import { distRoot, positioned, type FlowNode } from './nodered';
import * as S from './scenarios';

const MB = 1024 * 1024;
const SCALE_PROBE = path.join(__dirname, 'scale-probe.cjs');
/**
 * The busy-watch row: parking watch and stats events of every consumer every WATCH_S s (the defaults
 * are a 30 s parking watch and no stats output), so several looks fall in each idle window.
 */
const WATCH_S = 10;

export interface ScaleOptions {
  smoke: boolean;
  reps: number;
  ctx: S.Ctx;
  names: NameBook;
  log: (text: string) => void;
}

export interface ConsumersRow {
  consumers: number;
  /** Parking watch and stats every WATCH_S s (otherwise the node defaults). */
  busyWatch: boolean;
  /** Deploy → every queue has its consumer (s). */
  startS: number;
  /** After a full GC, all consuming, idle. */
  rssMb: number;
  /** (RSS(N) − RSS(1)) / (N − 1). */
  rssPerConsumerMb: number | undefined;
  idleCpuPct: number;
  brokerIdleCpuPct: number;
  /** Per second while idle: channels opened to look (one per coalesced look), passive queue checks, HTTP requests. */
  looksPerSec: number;
  checksPerSec: number;
  httpPerSec: number;
  windowS: number;
}
export interface CompetingRow {
  processes: number;
  count: number;
  msgPerSec: number;
  runs: number[];
}
export interface BigRow {
  label: string;
  size: number;
  count: number;
  pkg: number;
  raw: number;
}
export interface BacklogResult {
  count: number;
  preloadS: number;
  drainS: number;
  msgPerSec: number;
  rssBeforeMb: number;
  rssStartMb: number;
  rssMaxMb: number;
  /** RSS at 10, 50 and 90 % of the drain. */
  rssAtMb: [number, number, number];
  growthMb: number;
}
export interface ScaleResult {
  brokerBaselineCpuPct?: number;
  consumers: ConsumersRow[];
  competing: CompetingRow[];
  big: BigRow[];
  backlog?: BacklogResult;
  notes: string[];
}

// ------------------------------------------------------------------------------------------------
// A Node-RED process with the probe

interface Report {
  seq: number;
  at: number;
  rss: number;
  heapUsed: number;
  consumeOk: number;
  lastConsumeOkAt: number;
  deliveries: number;
  firstDeliveryAt: number;
  lastSettleAt: number;
  checkQueue: number;
  channelOpens: number;
  httpRequests: number;
  amqplibCopies: number;
}

const wallNow = (): number => performance.timeOrigin + performance.now();

/** user + system CPU of a process so far (µs), from /proc/<pid>/stat. */
function procCpuUs(pid: number, clockTicks = 100): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
}
function procRss(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** A user directory with the package linked in (its dist/ is what Node-RED loads). */
function userDirWithPackage(): string {
  const userDir = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-userdir-'));
  mkdirSync(path.join(userDir, 'node_modules'), { recursive: true });
  symlinkSync(path.dirname(distRoot), path.join(userDir, 'node_modules', PACKAGE), 'dir');
  return userDir;
}

class ProbedRed {
  private constructor(
    readonly red: NodeRedProcess,
    private readonly out: string,
    readonly userDir: string,
  ) {}

  static async start(launch: NodeRedLaunch): Promise<ProbedRed> {
    const userDir = userDirWithPackage();
    const out = path.join(userDir, 'scale-report.json');
    try {
      const red = await NodeRedProcess.start({ launch, userDir, env: { BENCH_SCALE_OUT: out }, nodeArgs: ['--expose-gc', '--require', SCALE_PROBE] });
      return new ProbedRed(red, out, userDir);
    } catch (err) {
      rmSync(userDir, { recursive: true, force: true });
      throw err;
    }
  }

  get pid(): number {
    return this.red.child.pid!;
  }

  private lastSeq = 0;
  /** The probe's counters (`gc`: after a full GC, for memory); `reset`: start them again from zero afterwards. */
  async report({ gc = false, reset = false }: { gc?: boolean; reset?: boolean } = {}): Promise<Report> {
    if (reset) writeFileSync(`${this.out}.reset`, '');
    if (gc) writeFileSync(`${this.out}.gc`, '');
    this.red.child.kill('SIGWINCH');
    let found: Report | undefined;
    await waitFor(
      () => {
        if (this.red.exited) throw new Error(`Node-RED exited${this.red.log()}`);
        try {
          const r = JSON.parse(readFileSync(this.out, 'utf8')) as Report;
          if (r.seq > this.lastSeq) found = r;
        } catch {
          // Not written yet.
        }
        return found !== undefined;
      },
      'the scale probe report',
      15_000,
    );
    this.lastSeq = found!.seq;
    return found!;
  }

  async deploy(flow: FlowNode[]): Promise<void> {
    try {
      await this.red.deploy(positioned(flow));
    } catch (err) {
      // fetch reusing a keep-alive socket Node-RED's server has just closed: "fetch failed", nothing deployed.
      if (!(err instanceof TypeError) || this.red.exited) throw err;
      await this.red.deploy(positioned(flow));
    }
  }

  async stop(): Promise<void> {
    await this.red.stop();
    rmSync(this.userDir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------------
// Flows

const brokerFlowNode = (url: string, managementUrl = ''): FlowNode => ({ ...S.benchBroker({ url }), managementUrl });

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

const oneConsumerFlow = (url: string, topo: Names, prefetch: number): FlowNode[] => [tab(), brokerFlowNode(url), S.benchConfig(topo), S.benchConsumer([['ack']], prefetch), S.settleNode('ack', 'ack')];

// ------------------------------------------------------------------------------------------------
// Parts

async function deleteQueues(model: ChannelModel, queues: string[]): Promise<void> {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  try {
    for (const q of queues) await ch.deleteQueue(q);
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/** Waits until every queue has a consumer; returns when that was first seen (wall clock ms). */
async function allConsuming(model: ChannelModel, queues: string[], red: ProbedRed, timeoutMs: number): Promise<number> {
  let ch: Channel | undefined;
  try {
    let waiting = queues;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const still: string[] = [];
      for (const [i, q] of waiting.entries()) {
        try {
          if (!ch) {
            ch = await model.createChannel();
            ch.on('error', () => undefined);
          }
          if ((await ch.checkQueue(q)).consumerCount === 0) still.push(q);
        } catch {
          // Not declared yet (a 404 closes the channel): this one and the rest wait for the next round.
          ch = undefined;
          still.push(...waiting.slice(i));
          break;
        }
      }
      const at = wallNow();
      waiting = still;
      if (waiting.length === 0) return at;
      if (red.red.exited) throw new Error(`Node-RED exited${red.red.log()}`);
      if (Date.now() > deadline) throw new Error(`${waiting.length} of ${queues.length} queues have no consumer after ${timeoutMs / 1000} s (${waiting[0]})${red.red.log()}`);
      await sleep(50);
    }
  } finally {
    await ch?.close().catch(() => undefined);
  }
}

/** CPU % of a process and of the broker over `windowS` seconds of nothing to do. */
async function idleWindow(pid: number, windowS: number): Promise<{ cpuPct: number; brokerPct: number; seconds: number }> {
  const cpu0 = procCpuUs(pid);
  const broker0 = brokerCpuUs();
  const t0 = performance.now();
  await sleep(windowS * 1000);
  const seconds = (performance.now() - t0) / 1000;
  return { cpuPct: (procCpuUs(pid) - cpu0) / 1e4 / seconds, brokerPct: (brokerCpuUs() - broker0) / 1e4 / seconds, seconds };
}

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

/** Raw amqplib publishing Buffers on a confirm channel, `window` in flight, persistent + mandatory. */
async function rawBufferPublish(model: ChannelModel, queue: string, count: number, window: number, content: Buffer): Promise<RunResult> {
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  try {
    return await S.timed(
      count,
      () =>
        new Promise<void>((resolve, reject) => {
          let sent = 0;
          let confirmed = 0;
          const one = (): void => {
            sent += 1;
            ch.publish('', queue, content, { contentType: 'application/octet-stream', persistent: true, mandatory: true }, (err: unknown) => {
              if (err) {
                reject(new Error(errorText(err)));
                return;
              }
              confirmed += 1;
              if (confirmed === count) resolve();
              else if (sent < count) one();
            });
          };
          for (let k = 0; k < window && sent < count; k += 1) one();
        }),
    );
  } finally {
    await ch.close().catch(() => undefined);
  }
}

async function bigPart(o: ScaleOptions, result: ScaleResult): Promise<void> {
  // 20 MB: one publish in flight. With two, the second waits in the broker node's publish buffer
  // (16 MiB by default), which refuses it: a user raises "publish buffer (MiB)" for messages this large.
  const plan = o.smoke
    ? [{ size: MB, count: 10, prefetch: 4, window: 4 }]
    : [
        { size: MB, count: 60, prefetch: 10, window: 10 },
        { size: 20 * MB, count: 15, prefetch: 2, window: 1 },
      ];
  const reps = o.smoke ? 1 : Math.min(3, o.reps);
  const topo = o.names.topology('scale-big');
  const pubQueue = o.names.queue('scale-big-publish');
  await S.declareTopology(o.ctx, topo);
  const admin = await o.ctx.model.createChannel();
  await admin.assertQueue(pubQueue, { durable: true });
  await admin.close();
  try {
    for (const { size, count, prefetch, window } of plan) {
      const content = Buffer.alloc(size, 'x');
      const sizeText = `${size / MB} MB`;
      const binary = (i: number): Options.Publish => ({ ...messageProperties(i), contentType: 'application/octet-stream' });
      const load = async (): Promise<void> => {
        await purge(o.ctx.model, topo.mainQueue);
        await preload(o.ctx.model, topo.mainQueue, count, content, binary, 10);
        await waitForCount(o.ctx.model, topo.mainQueue, count);
      };
      const consume = { pkg: [] as number[], raw: [] as number[] };
      const publish = { pkg: [] as number[], raw: [] as number[] };
      for (let rep = 0; rep < reps; rep += 1) {
        await load();
        consume.raw.push((await S.rawConsume(o.ctx, { queue: topo.mainQueue, count, prefetch })).msgPerSec);
        await load();
        consume.pkg.push((await S.pkgConsume(o.ctx, { topo, count, prefetch })).msgPerSec);
        await purge(o.ctx.model, pubQueue);
        publish.raw.push((await rawBufferPublish(o.ctx.model, pubQueue, count, window, content)).msgPerSec);
        await purge(o.ctx.model, pubQueue);
        publish.pkg.push((await S.pkgPublish(o.ctx, { queue: pubQueue, count, window, payload: content })).msgPerSec);
        await purge(o.ctx.model, pubQueue);
        o.log(
          `   scale ${sizeText} #${rep + 1}: consume pkg ${consume.pkg.at(-1)!.toFixed(1)} / raw ${consume.raw.at(-1)!.toFixed(1)} msg/s, publish pkg ${publish.pkg.at(-1)!.toFixed(1)} / raw ${publish.raw.at(-1)!.toFixed(1)} msg/s`,
        );
      }
      result.big.push({ label: `${sizeText} consume → retry-settle ack, prefetch ${prefetch}`, size, count, pkg: median(consume.pkg), raw: median(consume.raw) });
      result.big.push({ label: `${sizeText} retry-publish + confirm, ${window} in flight`, size, count, pkg: median(publish.pkg), raw: median(publish.raw) });
    }
  } finally {
    await purge(o.ctx.model, topo.mainQueue).catch(() => undefined);
    await deleteQueues(o.ctx.model, [topo.mainQueue, topo.retryQueue, topo.parkingQueue, pubQueue]).catch(() => undefined);
  }
}

/** Preload with several confirm channels at once (persistent 1 KB). */
async function fastPreload(model: ChannelModel, queue: string, count: number, body: Buffer): Promise<void> {
  const persistent = (i: number): Options.Publish => ({ ...messageProperties(i), deliveryMode: 2 });
  const lanes = 4;
  const per = Math.ceil(count / lanes);
  await Promise.all(Array.from({ length: lanes }, (_v, lane) => preload(model, queue, Math.max(0, Math.min(per, count - lane * per)), body, persistent, 2000)));
}

async function backlogPart(o: ScaleOptions, red: ProbedRed, result: ScaleResult): Promise<void> {
  const count = o.smoke ? 20_000 : 1_000_000;
  const topo = o.names.topology('scale-backlog');
  await S.declareTopology(o.ctx, topo);
  try {
    const t0 = performance.now();
    await fastPreload(o.ctx.model, topo.mainQueue, count, Buffer.from(JSON.stringify(o.ctx.body1k)));
    await waitForCount(o.ctx.model, topo.mainQueue, count, 120_000);
    const preloadS = (performance.now() - t0) / 1000;
    o.log(`   scale backlog: ${count} persistent 1 KB messages preloaded in ${preloadS.toFixed(1)} s`);
    await red.report({ reset: true });
    const rssBefore = (await red.report({ gc: true })).rss;
    const ch = await o.ctx.model.createChannel();
    ch.on('error', () => undefined);
    const samples: Array<{ done: number; rss: number }> = [];
    const d0 = performance.now();
    try {
      await red.deploy(oneConsumerFlow(o.ctx.url, topo, 100));
      const deadline = Date.now() + Math.max(300_000, count * 2);
      for (;;) {
        await sleep(1000);
        const { messageCount } = await ch.checkQueue(topo.mainQueue);
        samples.push({ done: (count - messageCount) / count, rss: procRss(red.pid) });
        if (messageCount === 0) break;
        if (red.red.exited) throw new Error(`Node-RED exited${red.red.log()}`);
        if (Date.now() > deadline) throw new Error(`backlog: ${messageCount} messages left after ${Math.round((performance.now() - d0) / 1000)} s`);
      }
      await waitFor(async () => (await red.report()).deliveries >= count, `${count} deliveries`, 60_000);
    } finally {
      await ch.close().catch(() => undefined);
    }
    const report = await red.report();
    const drainS = (report.lastSettleAt - report.firstDeliveryAt) / 1000;
    const at = (p: number): number => (samples.find((s) => s.done >= p) ?? samples.at(-1)!).rss / MB;
    const running = samples.filter((s) => s.done > 0);
    const rssStart = (running[0] ?? samples[0]!).rss;
    const rssMax = Math.max(...samples.map((s) => s.rss));
    result.backlog = {
      count,
      preloadS,
      drainS,
      msgPerSec: count / drainS,
      rssBeforeMb: rssBefore / MB,
      rssStartMb: rssStart / MB,
      rssMaxMb: rssMax / MB,
      rssAtMb: [at(0.1), at(0.5), at(0.9)],
      growthMb: (rssMax - rssStart) / MB,
    };
    const b = result.backlog;
    o.log(
      `   scale backlog: drained in ${drainS.toFixed(1)} s (${Math.round(b.msgPerSec)} msg/s); rss idle ${b.rssBeforeMb.toFixed(1)}, first second ${b.rssStartMb.toFixed(1)}, at 10/50/90 % ${b.rssAtMb.map((x) => x.toFixed(1)).join(' / ')}, max ${b.rssMaxMb.toFixed(1)} MiB`,
    );
  } finally {
    await red.deploy([tab()]).catch(() => undefined);
    await deleteQueues(o.ctx.model, [topo.mainQueue, topo.retryQueue, topo.parkingQueue]).catch(() => undefined);
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

// ------------------------------------------------------------------------------------------------
// Report

const f = (x: number | undefined, digits = 0): string => (x !== undefined && Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a');
const pad = (text: string, width: number, right = true): string => (right ? text.padStart(width) : text.padEnd(width));

export function scaleTable(r: ScaleResult): string[] {
  const out: string[] = [];
  if (r.consumers.length === 0 && r.competing.length === 0 && r.big.length === 0 && !r.backlog) return out;
  out.push('');
  out.push('scale (real Node-RED processes, the package from dist/; see docs/benchmark.md "Scale"):');
  if (r.consumers.length > 0) {
    out.push('  consumers in one Node-RED process, one broker connection, each on its own queue + retry topology (node defaults: parking watch 30 s, no stats output):');
    out.push(`  ${pad('consumers', 18, false)}${pad('start s', 9)}${pad('RSS MiB', 9)}${pad('MiB/consumer', 14)}${pad('idle CPU %', 12)}${pad('broker CPU %', 14)}${pad('looks/s', 9)}${pad('queue checks/s', 16)}${pad('HTTP/s', 8)}`);
    for (const c of r.consumers) {
      out.push(
        `  ${pad(`${c.consumers}${c.busyWatch ? ` (watch ${WATCH_S} s)` : ''}`, 18, false)}${pad(f(c.startS, 2), 9)}${pad(f(c.rssMb, 1), 9)}${pad(f(c.rssPerConsumerMb, 3), 14)}${pad(f(c.idleCpuPct, 2), 12)}${pad(f(c.brokerIdleCpuPct, 2), 14)}${pad(f(c.looksPerSec, 2), 9)}${pad(f(c.checksPerSec, 1), 16)}${pad(f(c.httpPerSec, 2), 8)}`,
      );
    }
    if (r.consumers.some((c) => c.busyWatch)) out.push(`  (watch ${WATCH_S} s): parking watch and stats output (events) every ${WATCH_S} s on every consumer. looks/s: channels opened to look at queues; queue checks/s: passive declares.`);
    if (r.brokerBaselineCpuPct !== undefined) out.push(`  broker CPU with no bench consumer over the same window: ${f(r.brokerBaselineCpuPct, 2)} %`);
  }
  if (r.competing.length > 0) {
    const one = r.competing[0]!.msgPerSec;
    out.push(`  Node-RED processes competing on one queue (${f(r.competing[0]!.count)} persistent 1 KB, prefetch 100 each, consumer → retry-settle ack):`);
    for (const c of r.competing) out.push(`  ${pad(`${c.processes} process(es)`, 16, false)}${pad(f(c.msgPerSec), 10)} msg/s   ×${f(c.msgPerSec / one, 2)}   runs ${c.runs.join(', ')}`);
  }
  if (r.big.length > 0) {
    out.push('  big messages (the bench\'s own Node-RED runtime; raw amqplib doing the same for comparison):');
    for (const b of r.big) {
      out.push(`  ${pad(b.label, 46, false)}${pad(f(b.count), 4)} msgs  pkg ${pad(f(b.pkg, 1), 7)} msg/s ${pad(f((b.pkg * b.size) / MB, 0), 5)} MB/s   raw ${pad(f(b.raw, 1), 7)} msg/s ${pad(f((b.raw * b.size) / MB, 0), 5)} MB/s   pkg/raw ${f(b.pkg / b.raw, 2)}`);
    }
  }
  const b = r.backlog;
  if (b) {
    out.push(`  backlog of ${f(b.count)} persistent 1 KB messages (preloaded in ${f(b.preloadS, 1)} s), drained at prefetch 100 in ${f(b.drainS, 1)} s (${f(b.msgPerSec)} msg/s):`);
    out.push(`    RSS idle ${f(b.rssBeforeMb, 1)} MiB; first second of the drain ${f(b.rssStartMb, 1)}; at 10 / 50 / 90 % ${b.rssAtMb.map((x) => f(x, 1)).join(' / ')}; max ${f(b.rssMaxMb, 1)} MiB; growth during the drain ${f(b.growthMb, 1)} MiB`);
  }
  for (const note of r.notes) out.push(`  ${note}`);
  return out;
}

export function scaleJson(r: ScaleResult): Record<string, number | null> {
  const at = (n: number): ConsumersRow | undefined => r.consumers.find((c) => c.consumers === n && !c.busyWatch);
  const busy = (n: number): ConsumersRow | undefined => r.consumers.find((c) => c.consumers === n && c.busyWatch);
  const largest = r.consumers.filter((c) => !c.busyWatch).at(-1);
  const big = (size: number, kind: 'consume' | 'publish'): BigRow | undefined => r.big.find((b) => b.size === size && b.label.includes(kind === 'consume' ? 'consume' : 'publish'));
  const one = r.competing.find((c) => c.processes === 1)?.msgPerSec;
  const four = r.competing.find((c) => c.processes === 4)?.msgPerSec;
  return {
    scaleStart100S: round(at(100)?.startS, 2),
    scaleStart300S: round(at(300)?.startS, 2),
    scaleRssPerConsumerMb: round(largest?.rssPerConsumerMb, 3),
    scaleIdleCpuPct300: round(at(300)?.idleCpuPct, 2),
    scaleIdleBrokerCpuPct300: round(at(300)?.brokerIdleCpuPct, 2),
    scaleIdleLooksPerSec300: round(at(300)?.looksPerSec, 2),
    scaleIdleQueueChecksPerSec300: round(at(300)?.checksPerSec, 1),
    scaleIdleCpuPct300Watch10: round(busy(300)?.idleCpuPct, 2),
    scaleIdleBrokerCpuPct300Watch10: round(busy(300)?.brokerIdleCpuPct, 2),
    scaleIdleLooksPerSec300Watch10: round(busy(300)?.looksPerSec, 2),
    scaleIdleQueueChecksPerSec300Watch10: round(busy(300)?.checksPerSec, 1),
    competing2Ratio: one && r.competing.find((c) => c.processes === 2) ? round(r.competing.find((c) => c.processes === 2)!.msgPerSec / one, 3) : null,
    competing4Ratio: one && four ? round(four / one, 3) : null,
    competing1MsgPerSec: round(one),
    big1mbConsumeMsgPerSec: round(big(MB, 'consume')?.pkg, 1),
    big1mbPublishMsgPerSec: round(big(MB, 'publish')?.pkg, 1),
    big20mbConsumeMsgPerSec: round(big(20 * MB, 'consume')?.pkg, 1),
    big20mbPublishMsgPerSec: round(big(20 * MB, 'publish')?.pkg, 1),
    backlog1mRssGrowthMb: round(r.backlog?.growthMb, 1),
    backlog1mRssGrowthAfter10PctMb: r.backlog ? round(r.backlog.rssMaxMb - r.backlog.rssAtMb[0], 1) : null,
    backlog1mDrainS: round(r.backlog?.drainS, 1),
  };
}
