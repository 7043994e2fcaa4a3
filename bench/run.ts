/**
 * `npm run bench`: this package inside a Node-RED runtime vs raw amqplib, pair by pair, back to back
 * on the same broker, in one process (the memory part runs its Node-RED side in a child process; the
 * peers section runs each contestant in a process of its own, see lib/peers.ts).
 *
 *   npm run bench                      full run (a few minutes on 2 cores)
 *   BENCH_SMOKE=1 npm run bench        tiny counts, one repetition (CI; < 60 s)
 *   npm run bench -- --smoke           the same
 *   npm run bench -- --only=consume,park   some sections (consume, degrade, analysis, peers, retry, native-retry, park, publish, dedupe, outbox, nodered, scale, parking, history, memory, partitions)
 *   AMQP_URL=amqp://guest:guest@127.0.0.1:5674 RABBITMQ_MANAGEMENT_URL=http://127.0.0.1:15674 npm run bench -- --only=native-retry
 *                                      broker-native delayed retry vs the TTL retry path (RabbitMQ 4.3+ only)
 *   npm run bench -- --only=consume --consume=16k:100   some consume+ack cases (size:prefetch; also filters analysis sizes)
 *   BENCH_REPS=7 npm run bench         more repetitions (default 5; the median is reported)
 *   BENCH_DIST=/path/to/dist node --expose-gc --import tsx bench/run.ts   another build of the package (compare a change)
 *
 * Other tools: bench/tools/profile.ts (CPU profile of one case), bench/tools/micro.ts (the package's
 * per-message code without broker or Node-RED). See docs/benchmark.md.
 *
 * Progress goes to stderr; the table and, as the last line, one JSON object go to stdout.
 * Benchmarks are not tests: nothing here asserts a speed. A section that fails is reported and the
 * process exits 1 after printing what it has.
 */
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Options } from 'amqplib';
import type { Names } from '../test/helpers/flows';
import {
  AMQP_URL,
  NameBook,
  connect,
  errorText,
  fullGc,
  initBrokerCpu,
  installProbe,
  makeBody,
  median,
  messageProperties,
  percentile,
  preload,
  purge,
  round,
  sleep,
  waitForCount,
  withTimeout,
  type RunResult,
} from './lib/common';
import { RUNTIME_DESCRIPTION, packageNodes, versions, type Msg } from './lib/nodered';
import { BATCHED_PEER_KEY, PEERS_DIR, preparePeers, stopPeerProcesses } from './lib/peers';
import * as S from './lib/scenarios';
import * as D from './lib/store-scenarios';
import { rawDedupe } from './lib/dedupe-raw';
import { rawPipelinedRelay } from './lib/relay-raw';
import * as P from './lib/outbox-pipeline';
import { runScale, scaleJson, scaleTable, type ScaleResult } from './lib/scale-scenarios';
import { historyMemoryRun, type HistoryMemoryRun } from './lib/history-memory';
import { parkingGroupRun, type ParkingGroupRun } from './lib/parking-group';
import { degradeJson, degradeTable, runDegrade, type DegradeResult } from './lib/degrade-scenarios';
import { partitionsJson, partitionsTable, runPartitions, type PartitionsResult } from './lib/partitions';
import { NATIVE_RETRY_VARIANTS, brokerVersion, declareNativeRetry, nativeRetryRun, nativeRetrySkip, type NativeRetryRow } from './lib/native-retry';

const here = __dirname;
const argv = process.argv.slice(2);
const SMOKE = process.env.BENCH_SMOKE === '1' || argv.includes('--smoke');
const onlyArg = argv.find((a) => a.startsWith('--only='));
const ONLY = onlyArg ? new Set(onlyArg.slice('--only='.length).split(',')) : undefined;
const REPS = SMOKE ? 1 : Math.max(1, Number(process.env.BENCH_REPS ?? 5));
/**
 * `--consume=16k:100,1k:1` (or BENCH_CONSUME): only these consume+ack cases (size:prefetch), and only
 * their sizes in the analysis section. For single-scenario runs on a shared machine.
 */
const consumeArg = argv.find((a) => a.startsWith('--consume='))?.slice('--consume='.length) ?? process.env.BENCH_CONSUME;
const CONSUME_CASES = consumeArg?.split(',').map((c) => {
  const [size = '', prefetch = ''] = c.split(':');
  return { size: Number.parseInt(size, 10) * (/k$/i.test(size) ? 1024 : 1), prefetch: Number(prefetch) };
});
const wantCase = (size: number, prefetch?: number): boolean =>
  !CONSUME_CASES || CONSUME_CASES.some((c) => c.size === size && (prefetch === undefined || !c.prefetch || c.prefetch === prefetch));
const TTL_MS = 200;

/** Message counts per run: large enough that a full run takes seconds, tiny in smoke mode. */
const n = (full: number, smoke: number): number => (SMOKE ? smoke : full);
const PLAN = {
  consume: [
    { size: 1024, prefetch: 1, count: n(20000, 200) },
    { size: 1024, prefetch: 10, count: n(15000, 300) },
    { size: 1024, prefetch: 100, count: n(30000, 500) },
    { size: 16384, prefetch: 1, count: n(10000, 100) },
    { size: 16384, prefetch: 10, count: n(12000, 200) },
    { size: 16384, prefetch: 100, count: n(16000, 300) },
  ].filter((c) => wantCase(c.size, c.prefetch)),
  analysis: n(20000, 500),
  analysis16k: n(8000, 200),
  peers: n(30000, 500),
  retry: n(20000, 300),
  nativeRetry: n(20000, 300),
  lag: { count: n(1500, 100), rate: n(500, 200) },
  park: n(8000, 300),
  publish: n(10000, 300),
  nodered: n(50000, 2000),
  memory: { batches: n(10, 2), batchSize: n(20000, 500) },
  warmup: n(3000, 300),
  /** Long enough that a run is timed for seconds, not a fraction of one (at 10 000 the memory key moved 0.85–0.98 with the same code). */
  dedupe: n(30000, 300),
  outboxRelay: n(10000, 300),
  outboxWrite: n(3000, 200),
  outboxLatency: n(300, 30),
  /** Commit → consumer at a sustained rate: 10 writers, 1 000 events/s in all, for this many seconds. */
  outboxRate: { writers: 10, rate: 1000, seconds: n(10, 2) },
  /** Parked 1 KB messages grouped by reason (the issue's target: 100 000 in ≤ 10 s and ≤ 100 MiB). */
  parkingGroup: n(100_000, 1000),
  /** Ordered with a 5 ms downstream (issue 42): one queue, and 8 partitions (about 5 s each at full counts). */
  partitions: { one: n(1000, 40), partitioned: n(8000, 320) },
};
const WINDOW = 100; // publish: msgs in flight, like prefetch 100
const PREFETCH = 100;

const want = (section: string): boolean => !ONLY || ONLY.has(section);
const log = (text: string): boolean => process.stderr.write(`${text}\n`);
const kb = (bytes: number): string => `${Math.round(bytes / 1024)} KB`;
const MB = 1024 * 1024;

// ------------------------------------------------------------------------------------------------

interface Summary {
  msgPerSec: number;
  cpuUsPerMsg: number;
  brokerUsPerMsg: number;
  runs: Array<number | null>;
}
interface Row {
  group: string;
  label: string;
  count: number;
  raw: Summary;
  pkg: Summary;
  ratio: number;
  /**
   * The median of each repetition's own pkg/raw ratio (its two runs taken back to back): drift on a
   * shared machine between repetitions moves it less than the ratio of the medians (`ratio`).
   */
  pairRatio: number;
  /** Raw amqplib doing the same work as the package (decode the body, build the same msg), where measured. */
  work?: Summary;
  workRatio?: number;
  /** Raw amqplib doing the same work with its acks batched the way the package batches them: the baseline of issue 19. */
  batched?: Summary;
  batchedRatio?: number;
  /**
   * Node-RED alone (lib/nodered-alone.ts): the batched raw contestant's work in the package's
   * Node-RED runtime, its msg through the package flow's hops, no package node. pkg / it: the
   * package's own share; it / batched (or / raw without a batched run): Node-RED's.
   */
  nodeRed?: Summary;
  nodeRedRatio?: number;
  nodeRedBaseRatio?: number;
}
interface Single extends Summary {
  group: string;
  label: string;
  count: number;
}
interface PeerRow extends Summary {
  label: string;
  version: string;
  ack: string;
  key: string;
  /** Median msg/s as a ratio to the first row (raw amqplib). */
  ratio: number;
  /** Median msg/s as a ratio to raw amqplib doing the same work with batched acks (the best hand-written client). */
  batchedRatio: number;
}
interface LagStats {
  p50: number;
  p99: number;
  max: number;
}
interface MemorySnapshot {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** V8's young generation (new space), reserved size. */
  newSpace?: number;
  /** The young generation's committed memory (part of the RSS). */
  newSpacePhysical?: number;
}
interface MemoryRun {
  before: MemorySnapshot;
  warm: MemorySnapshot;
  end: MemorySnapshot;
  total: number;
  batchSize: number;
}
interface Extra {
  /** Ordered throughput with a 5 ms downstream: one queue against 8 partitions. */
  partitions?: PartitionsResult;
  lag?: { count: number; rate: number; raw: LagStats; pkgAmqp: LagStats; pkgFlow: LagStats };
  memory?: MemoryRun;
  /** The same load on a raw amqplib consumer doing the same work, in a process of its own. */
  rawMemory?: MemoryRun;
  /** Node-RED alone: raw amqplib doing the same work, its msg through one Node-RED hop (source → sink), in the same runtime. */
  nodeRedMemory?: MemoryRun;
  peers?: { rows: PeerRow[]; skipped: string[] };
  /** Outbox: from the write's answer to the event at a consumer (ms). */
  outboxLatency?: { p50: number; p99: number };
  /** Outbox: from a writer's COMMIT to the event at a consumer at a sustained rate (ms), and the rate written. */
  outboxLatencyAtRate?: P.RateLatency;
  /** Parking groups: a park-replay node grouping the parking queue, in a Node-RED process of its own. */
  parkingGroup?: ParkingGroupRun;
  history?: HistoryMemoryRun;
  /** Broker-native delayed retry vs the TTL retry path (RabbitMQ 4.3+), or why it did not run. */
  nativeRetry?: { count: number; rows: NativeRetryRow[] } | { skipped: string };
}
type Run = () => Promise<RunResult>;
type Prepare = () => Promise<void>;

const rows: Row[] = []; // main table
const analysis: Single[] = []; // single-sided measurements
const failures: string[] = [];
const extra: Extra = {}; // lag, memory, peers
const scale: ScaleResult = { consumers: [], competing: [], big: [], notes: [] };
const degrade: DegradeResult = {}; // rate limit, error rules + kill switch

/** The native-retry section's figures for the JSON line (none where it did not run). */
function nativeRetryJson(): Record<string, number | null> {
  const nr = extra.nativeRetry;
  if (!nr || 'skipped' in nr) return {};
  const out: Record<string, number | null> = {};
  for (const [i, v] of NATIVE_RETRY_VARIANTS.entries()) {
    const key = v.key.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    out[`nativeRetry_${key}_msgPerSec`] = round(nr.rows[i]?.msgPerSec);
    out[`nativeRetry_${key}_cpuUsPerMsg`] = round(nr.rows[i]?.cpuUsPerMsg, 1);
  }
  return out;
}

function summarize(runs: RunResult[]): Summary {
  return {
    msgPerSec: median(runs.map((r) => r.msgPerSec)),
    cpuUsPerMsg: median(runs.map((r) => r.cpuUsPerMsg)),
    brokerUsPerMsg: median(runs.map((r) => r.brokerUsPerMsg)),
    runs: runs.map((r) => round(r.msgPerSec)),
  };
}

/** The broker's CPU per message, and how many settle frames (acks, nacks; a multiple one settles many) the client wrote per message. */
const brokerText = (r: RunResult): string =>
  (Number.isFinite(r.brokerUsPerMsg) ? `, broker ${r.brokerUsPerMsg.toFixed(1)} µs/msg` : '') +
  (Number.isFinite(r.settleFramesPerMsg) ? `, ${r.settleFramesPerMsg?.toFixed(3)} settle frames/msg` : '');

async function section(name: string, work: () => Promise<void>): Promise<void> {
  if (!want(name)) return;
  const t0 = Date.now();
  log(`== ${name}`);
  try {
    await work();
  } catch (err) {
    failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    log(`!! ${name} failed: ${errorText(err)}`);
  }
  log(`   (${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/**
 * Runs raw and package (and, when given, raw doing the same work as the package, the same with
 * batched acks, and Node-RED alone) alternately, `REPS` times each, and adds a table row.
 */
async function pair(group: string, label: string, count: number, prepare: Prepare, raw: Run, pkg: Run, work?: Run, batched?: Run, nodeRed?: Run): Promise<Row> {
  const sides: Array<[string, Run, RunResult[]]> = [
    ['raw', raw, []],
    ['pkg', pkg, []],
  ];
  if (work) sides.push(['raw+work', work, []]);
  if (batched) sides.push(['raw+work+batched', batched, []]);
  if (nodeRed) sides.push(['Node-RED alone', nodeRed, []]);
  for (let rep = 0; rep < REPS; rep += 1) {
    for (const [side, run, into] of sides) {
      await prepare();
      fullGc();
      const r = await run();
      into.push(r);
      log(`   ${group} ${label} ${side} #${rep + 1}: ${Math.round(r.msgPerSec)} msg/s, ${r.cpuUsPerMsg.toFixed(1)} µs CPU/msg${brokerText(r)} (${r.seconds.toFixed(2)} s)`);
    }
  }
  const byName = new Map(sides.map(([name, , runs]) => [name, runs]));
  const [rawRuns, pkgRuns, workRuns, batchedRuns, nodeRedRuns] = [byName.get('raw'), byName.get('pkg'), byName.get('raw+work'), byName.get('raw+work+batched'), byName.get('Node-RED alone')];
  const row: Row = { group, label, count, raw: summarize(rawRuns!), pkg: summarize(pkgRuns!), ratio: NaN, pairRatio: NaN };
  row.ratio = row.pkg.msgPerSec / row.raw.msgPerSec;
  row.pairRatio = median(pkgRuns!.map((r, i) => r.msgPerSec / rawRuns![i]!.msgPerSec));
  if (workRuns) {
    row.work = summarize(workRuns);
    row.workRatio = row.pkg.msgPerSec / row.work.msgPerSec;
  }
  if (batchedRuns) {
    row.batched = summarize(batchedRuns);
    row.batchedRatio = row.pkg.msgPerSec / row.batched.msgPerSec;
  }
  if (nodeRedRuns) {
    row.nodeRed = summarize(nodeRedRuns);
    row.nodeRedRatio = row.pkg.msgPerSec / row.nodeRed.msgPerSec;
    row.nodeRedBaseRatio = row.nodeRed.msgPerSec / (row.batched ?? row.raw).msgPerSec;
  }
  rows.push(row);
  return row;
}

/**
 * Single-sided runs of several variants, taken round-robin (variant 1, 2, 3, 1, 2, 3, ...) so that
 * drift on a shared machine spreads over all of them. Each variant: [label, count, prepare, run].
 */
type Variant = [label: string, count: number, prepare: Prepare, run: Run];
async function variants(group: string, list: Variant[]): Promise<RunResult[][]> {
  const runs: RunResult[][] = list.map(() => []);
  for (let rep = 0; rep < REPS; rep += 1) {
    for (const [i, [label, , prepare, run]] of list.entries()) {
      await prepare();
      fullGc();
      const r = await run();
      runs[i]!.push(r);
      log(`   ${group} ${label} #${rep + 1}: ${Math.round(r.msgPerSec)} msg/s, ${r.cpuUsPerMsg.toFixed(1)} µs CPU/msg${brokerText(r)}`);
    }
  }
  return runs;
}

/** Variants whose results go to the "where the time goes" list. */
async function analysisVariants(group: string, list: Variant[]): Promise<void> {
  const runs = await variants(group, list);
  for (const [i, [label, count]] of list.entries()) analysis.push({ group, label, count, ...summarize(runs[i]!) });
}

// ------------------------------------------------------------------------------------------------

interface Environment {
  machine: string;
  broker: string;
  /** e.g. "RabbitMQ 3.10.8". */
  brokerProduct: string;
  /** The broker's OS process when it runs on this machine (its CPU is measured). */
  brokerPid: number | undefined;
  versions: string;
  runtime: string;
}
function environment(serverProperties: Record<string, unknown> | undefined, brokerPid: number | undefined): Environment {
  let cpuModel = 'unknown';
  try {
    cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel;
  } catch {
    cpuModel = os.cpus()[0]?.model ?? cpuModel;
  }
  let rev = 'unknown';
  try {
    rev = execFileSync('git', ['describe', '--always', '--dirty'], { cwd: path.join(here, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout.
  }
  const pkg = JSON.parse(readFileSync(path.join(here, '..', 'package.json'), 'utf8')) as { name: string; version: string };
  const u = new URL(AMQP_URL);
  const brokerProduct = `${(serverProperties?.product as string | undefined) ?? 'broker'} ${(serverProperties?.version as string | undefined) ?? '?'}`;
  return {
    machine: `${os.availableParallelism()} CPUs (${cpuModel}), ${Math.round(os.totalmem() / MB / 1024)} GiB RAM, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
    brokerProduct,
    brokerPid,
    broker: `${brokerProduct} at ${u.hostname}:${u.port || 5672}${brokerPid ? ` (os pid ${brokerPid}: its CPU is measured too)` : ' (its CPU is not measured: not local, or no management API)'}`,
    versions: `Node ${process.version}, Node-RED ${versions.nodeRed}, amqplib ${versions.amqplib}, ${pkg.name} ${pkg.version} (${rev})`,
    runtime: RUNTIME_DESCRIPTION,
  };
}

function pad(text: string | number, width: number, right = false): string {
  const s = String(text);
  return right ? s.padStart(width) : s.padEnd(width);
}

function fmt(x: number | undefined, digits = 0): string {
  return x !== undefined && Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';
}

function printReport(env: Environment): void {
  const out: string[] = [];
  out.push('');
  out.push(`# node-red-contrib-rabbitmq-retry benchmark${SMOKE ? ' (SMOKE: tiny counts, 1 repetition — numbers are not meaningful)' : ''}`);
  out.push(`machine:  ${env.machine}`);
  out.push(`broker:   ${env.broker}`);
  out.push(`software: ${env.versions}`);
  out.push(`runtime:  ${env.runtime}`);
  out.push(`method:   median of ${REPS} run(s) per side, raw and package alternating; consume runs start on a preloaded queue (transient ~1 KB / 16 KB JSON);`);
  out.push("          timed from the delivery after the first tenth (each run's warm-up) to the N-th ack (publish: first publish to N-th confirm, or to the N-th msg at the next node); CPU = this process, user+system, per message.");
  out.push('');
  const head = `${pad('scenario', 17)}${pad('case', 30)}${pad('N', 7, true)}${pad('raw msg/s', 11, true)}${pad('pkg msg/s', 11, true)}${pad('pkg/raw', 9, true)}${pad('pairs', 7, true)}${pad('raw+work', 10, true)}${pad('pkg/work', 10, true)}${pad('node µs/msg raw', 17, true)}${pad('work', 7, true)}${pad('pkg', 7, true)}${pad('broker µs/msg raw', 19, true)}${pad('pkg', 9, true)}${pad('batched msg/s', 15, true)}${pad('pkg/batched', 13, true)}${pad('Node-RED alone msg/s', 22, true)}${pad('pkg / Node-RED alone', 22, true)}${pad('Node-RED alone / base', 23, true)}${pad('Node-RED alone µs/msg', 23, true)}`;
  out.push(head);
  out.push('-'.repeat(head.length));
  for (const r of rows) {
    out.push(
      `${pad(r.group, 17)}${pad(r.label, 30)}${pad(r.count, 7, true)}${pad(fmt(r.raw.msgPerSec), 11, true)}${pad(fmt(r.pkg.msgPerSec), 11, true)}${pad(fmt(r.ratio, 2), 9, true)}${pad(fmt(r.pairRatio, 2), 7, true)}${pad(fmt(r.work?.msgPerSec), 10, true)}${pad(fmt(r.workRatio, 2), 10, true)}${pad(fmt(r.raw.cpuUsPerMsg, 1), 17, true)}${pad(fmt(r.work?.cpuUsPerMsg, 1), 7, true)}${pad(fmt(r.pkg.cpuUsPerMsg, 1), 7, true)}${pad(fmt(r.raw.brokerUsPerMsg, 1), 19, true)}${pad(fmt(r.pkg.brokerUsPerMsg, 1), 9, true)}${pad(fmt(r.batched?.msgPerSec), 15, true)}${pad(fmt(r.batchedRatio, 2), 13, true)}${pad(fmt(r.nodeRed?.msgPerSec), 22, true)}${pad(fmt(r.nodeRedRatio, 2), 22, true)}${pad(fmt(r.nodeRedBaseRatio, 2), 23, true)}${pad(fmt(r.nodeRed?.cpuUsPerMsg, 1), 23, true)}`,
    );
  }
  out.push("pairs: the median of each repetition's own pkg/raw ratio (its two runs back to back): less moved by drift between repetitions than pkg/raw, the ratio of the medians.");
  out.push('raw+work: raw amqplib that also decodes the JSON body and builds the same msg (msg.payload, msg.amqp, msg.retry); pkg/work: the package against it.');
  out.push('batched: raw amqplib doing the same work, one setImmediate hop as a flow, and its acks batched per event-loop turn as the package batches them (multiple acks): the best hand-written client; pkg/batched: the package against it.');
  out.push('  (dedupe redis / postgres and relay vs publish: batched is a careful hand-written idempotent consumer or pipelined relay with the same protocol, bench/lib/dedupe-raw.ts and relay-raw.ts: what the protocol costs without the package.)');
  out.push(
    "Node-RED alone: the batched raw contestant's work (publish: the raw side's) in the same Node-RED runtime, its msg through the package flow's hops (consume 1, retry 2, publish: on to the next node after the confirm), no package node;",
  );
  out.push('  pkg / Node-RED alone: the package\'s own share of a gap; Node-RED alone / base: Node-RED\'s (base: batched where measured, else raw).');
  out.push('node µs/msg: CPU (user+system) of this Node.js process per message; broker µs/msg: CPU of the RabbitMQ process per message.');
  if (extra.peers) {
    const { rows: peerRows, skipped } = extra.peers;
    const local = env.brokerPid ? `on the same ${os.availableParallelism()}-core machine` : `at ${new URL(AMQP_URL).host}`;
    out.push('');
    out.push(
      `other Node-RED AMQP packages: one Node-RED ${versions.nodeRed} process per package, ${env.brokerProduct} ${local}, a queue preloaded with ${fmt(PLAN.peers)} persistent 1 KB JSON messages, prefetch ${PREFETCH},`,
    );
    out.push(`  each message acked by the package's own mechanism; packages alternated, ${REPS} run(s) each, median (min–max). CPU is the Node-RED process's user+system time per message`);
    out.push('  (raw amqplib: a plain node process). Each run is a fresh process, timed from the delivery after its first tenth to its N-th ack. The other packages consume a plain durable queue.');
    const table = [
      ['package', 'version (amqplib)', 'ack', 'msg/s median (min–max)', 'vs raw', 'vs raw batched', 'CPU µs/msg', 'broker µs/msg'],
      ...peerRows.map((p) => {
        const runs = p.runs.filter((r): r is number => r !== null);
        const range = runs.length > 1 ? ` (${fmt(Math.min(...runs))}–${fmt(Math.max(...runs))})` : '';
        return [p.label, p.version, p.ack, `${fmt(p.msgPerSec)}${range}`, fmt(p.ratio, 2), fmt(p.batchedRatio, 2), fmt(p.cpuUsPerMsg, 1), fmt(p.brokerUsPerMsg, 1)];
      }),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((cells) => cells[i]!.length)) + 2);
    // Text columns left-aligned, figures right-aligned.
    for (const cells of table) out.push(`  ${cells.map((c, i) => (i < 3 ? pad(c, widths[i]!) : pad(c, widths[i]!, true))).join('')}`);
    out.push(`  same work: JSON.parse of the body and the msg the package builds (payload, amqp, retry). vs raw: median msg/s / raw amqplib's; vs raw batched: / raw amqplib doing the same work with its acks batched per turn.`);
    if (peerRows.some((p) => p.version.includes('*'))) out.push(`  * built from its source (not on the registry mirror) in ${PEERS_DIR}/from-source: docs/benchmark.md`);
    for (const note of skipped) out.push(`  not measured: ${note}`);
  }
  if (extra.nativeRetry) {
    const nr = extra.nativeRetry;
    out.push('');
    if ('skipped' in nr) out.push(`broker-native delayed retry: not measured: ${nr.skipped}`);
    else {
      out.push(`broker-native delayed retry vs the TTL retry path (the package; 1 KB, prefetch ${PREFETCH}, each of ${nr.count} msgs retried once after 200 ms, then acked; median of runs):`);
      for (const r of nr.rows) out.push(`  ${pad(r.label, 60)}${pad(fmt(r.msgPerSec), 9, true)} msg/s${pad(fmt(r.cpuUsPerMsg, 1), 8, true)} node µs/msg${Number.isFinite(r.brokerUsPerMsg) ? `${pad(fmt(r.brokerUsPerMsg, 1), 8, true)} broker µs/msg` : ''}`);
    }
  }
  if (extra.lag) {
    const l = extra.lag;
    out.push('');
    out.push(`retry lag beyond the ${TTL_MS} ms TTL (nack → redelivery − TTL; ${l.count} msgs at ${l.rate}/s per run, median of runs):`);
    out.push(`  raw amqplib:                         p50 ${fmt(l.raw.p50, 1)} ms   p99 ${fmt(l.raw.p99, 1)} ms   max ${fmt(l.raw.max, 1)} ms`);
    out.push(`  package, at amqplib's callback:      p50 ${fmt(l.pkgAmqp.p50, 1)} ms   p99 ${fmt(l.pkgAmqp.p99, 1)} ms   max ${fmt(l.pkgAmqp.max, 1)} ms`);
    out.push(`  package, msg reaching the flow node: p50 ${fmt(l.pkgFlow.p50, 1)} ms   p99 ${fmt(l.pkgFlow.p99, 1)} ms   max ${fmt(l.pkgFlow.max, 1)} ms`);
  }
  if (analysis.length > 0) {
    out.push('');
    out.push('where the time goes (single-sided runs, same broker):');
    for (const a of analysis) {
      const broker = Number.isFinite(a.brokerUsPerMsg) ? `${pad(fmt(a.brokerUsPerMsg, 1), 8, true)} broker µs/msg` : '';
      out.push(`  ${pad(a.group, 14)}${pad(a.label, 62)}${pad(fmt(a.msgPerSec), 10, true)} msg/s${pad(fmt(a.cpuUsPerMsg, 1), 8, true)} node µs/msg${broker}`);
    }
  }
  if (extra.memory) {
    const line = (label: string, s: MemorySnapshot): string =>
      `  ${pad(label, 34)}rss ${pad(fmt(s.rss / MB, 1), 7, true)} MiB   heap used ${pad(fmt(s.heapUsed / MB, 1), 6, true)} MiB   heap total ${pad(fmt(s.heapTotal / MB, 1), 6, true)} MiB   young gen ${pad(fmt((s.newSpacePhysical ?? NaN) / MB, 1), 5, true)} MiB   external ${pad(fmt(s.external / MB, 1), 6, true)} MiB`;
    const growth = (m: MemoryRun): string => {
      const young = ((m.end.newSpacePhysical ?? NaN) - (m.before.newSpacePhysical ?? NaN)) / MB;
      const rss = (m.end.rss - m.before.rss) / MB;
      return `  growth over ${fmt(m.total)} msgs: rss ${fmt(rss, 1)} MiB (${fmt((m.end.rss - m.warm.rss) / MB, 1)} after warm-up), of which V8's young generation ${fmt(young, 1)} MiB, the rest ${fmt(rss - young, 1)} MiB; heap used ${fmt((m.end.heapUsed - m.before.heapUsed) / MB, 1)} MiB (${fmt((m.end.heapUsed - m.warm.heapUsed) / MB, 1)} after warm-up)`;
    };
    const block = (title: string, m: MemoryRun): void => {
      out.push('');
      out.push(title);
      out.push(line('ready, before any message', m.before));
      out.push(line(`after ${fmt(m.batchSize)} msgs (warm)`, m.warm));
      out.push(line(`after ${fmt(m.total)} msgs`, m.end));
      out.push(growth(m));
    };
    block(`memory of the Node-RED process (child, --expose-gc, after a full GC), consume → ack at prefetch ${PREFETCH}, 1 KB:`, extra.memory);
    if (extra.rawMemory) block(`the same for raw amqplib doing the same work (the msg built, acked one turn later as a flow does, acks batched as the package batches them), in a process of its own:`, extra.rawMemory);
    if (extra.nodeRedMemory) block(`Node-RED alone: the same Node-RED runtime, raw amqplib doing the same work, its msg through one Node-RED hop (bench-source → bench-sink, acked there, batched), no package node in the flow:`, extra.nodeRedMemory);
  }
  if (extra.parkingGroup) {
    const g = extra.parkingGroup;
    out.push('');
    out.push(`parking groups: ${fmt(g.count)} parked 1 KB messages (5 reasons with variable parts) grouped by a park-replay node in a Node-RED process of its own (target for 100 000: ≤ 10 s, ≤ 100 MiB):`);
    out.push(`  ${fmt(g.seconds, 2)} s (${fmt(g.count / g.seconds)} msg/s), ${g.groups} groups; Node-RED process rss ${fmt(g.rssBefore / MB, 1)} MiB idle, peak ${fmt(g.rssPeak / MB, 1)} MiB while grouping (+${fmt((g.rssPeak - g.rssBefore) / MB, 1)} MiB)`);
  }
  if (extra.history) {
    const h = extra.history;
    out.push('');
    out.push(`history: ${fmt(h.consumers)} consumers' full ${fmt(h.minutes)}-minute history (6 series a minute: acked and depth 16-bit, 10 busy consumers' acked 32-bit, the rest 8-bit), in a process of its own (target: ≤ 10 MiB):`);
    const young = (h.youngAfter - h.youngBefore) / MB;
    out.push(`  rss +${fmt((h.rssAfter - h.rssBefore) / MB, 2)} MiB (${fmt(h.rssBefore / MB, 1)} → ${fmt(h.rssAfter / MB, 1)} MiB after a full GC), of which V8's young generation ${fmt(young, 2)} MiB; heap used +${fmt((h.heapAfter - h.heapBefore) / MB, 2)} MiB, the rings' typed arrays ${fmt(h.ringBytes / MB, 2)} MiB; filled in ${fmt(h.fillSeconds, 2)} s`);
  }
  out.push(...degradeTable(degrade));
  out.push(...scaleTable(scale));
  out.push(...partitionsTable(extra.partitions));
  if (failures.length > 0) {
    out.push('');
    out.push('FAILED sections:');
    for (const f of failures) out.push(`  ${f}`);
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

/** How much V8's committed young generation grew (MiB): V8's sizing under load, part of the RSS growth. */
function youngGrowth(m: MemoryRun): number | null {
  return round(((m.end.newSpacePhysical ?? NaN) - (m.before.newSpacePhysical ?? NaN)) / MB, 1);
}

/**
 * The Node-RED-alone keys of each pair that has that run: `<key>NodeRedRatio` (package msg/s /
 * Node-RED alone's: the package's own share), `<key>NodeRedAloneBatchedRatio` (Node-RED alone /
 * batched raw; publish, which has no batched run: `publishNodeRedAloneRawRatio`, / raw): Node-RED's
 * share; Node-RED alone's client CPU per message and the package's over it (`<key>NodeRedCpuRatio`).
 */
function nodeRedAloneJson(pairs: Array<[key: string, row: Row | undefined, base: 'Batched' | 'Raw']>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [key, row, base] of pairs) {
    out[`${key}NodeRedRatio`] = round(row?.nodeRedRatio, 3);
    out[`${key}NodeRedAlone${base}Ratio`] = round(row?.nodeRedBaseRatio, 3);
    out[`${key}NodeRedAloneCpuUsPerMsg`] = round(row?.nodeRed?.cpuUsPerMsg, 1);
    out[`${key}NodeRedCpuRatio`] = round(row?.nodeRed ? row.pkg.cpuUsPerMsg / row.nodeRed.cpuUsPerMsg : undefined, 3);
  }
  return out;
}

function summaryJson(): Record<string, number | null> {
  const find = (group: string, label: string): Row | undefined => rows.find((r) => r.group === group && r.label === label);
  const c100 = find('consume+ack', '1 KB, prefetch 100');
  const c10 = find('consume+ack', '1 KB, prefetch 10');
  const c1 = find('consume+ack', '1 KB, prefetch 1');
  const c16 = find('consume+ack', '16 KB, prefetch 100');
  const retry = find('retry path', '1 KB, prefetch 100, 1 retry');
  const park = find('park path', '1 KB, prefetch 100');
  const pub = find('publish+confirm', `1 KB, ${WINDOW} in flight`);
  const dedupe = (store: string): Row | undefined => find('dedupe', `${store} vs none, 1 KB, prefetch ${PREFETCH}`);
  const dMem = dedupe('memory');
  const dRedis = dedupe('redis');
  const dPg = dedupe('postgres');
  const group = (name: string): Row | undefined => rows.find((r) => r.group === name);
  const relay = group('relay vs publish');
  const pick = (label: string): Single | undefined => analysis.find((a) => a.label.startsWith(label));
  const m = extra.memory;
  const l = extra.lag;
  const r2 = (x: number | undefined): number | null => round(x, 3);
  // The hand-written contestant against the same "none" / raw side.
  const handWritten = (row: Row | undefined): number | undefined => (row?.batched ? row.batched.msgPerSec / row.raw.msgPerSec : undefined);
  const peers: Record<string, number | null> = {};
  for (const [i, p] of (extra.peers?.rows ?? []).entries()) {
    peers[`${p.key}MsgPerSec`] = round(p.msgPerSec);
    peers[`${p.key}CpuUsPerMsg`] = round(p.cpuUsPerMsg, 1);
    if (i > 0) peers[`${p.key}Ratio`] = r2(p.ratio);
    if (p.key !== BATCHED_PEER_KEY) peers[`${p.key}BatchedRatio`] = r2(p.batchedRatio);
  }
  return {
    consumeAckRatio: r2(c100?.ratio),
    parkRatio: r2(park?.ratio),
    publishConfirmRatio: r2(pub?.ratio),
    retryLagP99Ms: round(l?.pkgFlow.p99, 2),
    rssGrowthMb: m ? round((m.end.rss - m.before.rss) / MB, 1) : null,
    consumeAckMsgPerSec: round(c100?.pkg.msgPerSec),
    rawConsumeAckMsgPerSec: round(c100?.raw.msgPerSec),
    consumeAckCpuUsPerMsg: round(c100?.pkg.cpuUsPerMsg, 1),
    rawConsumeAckCpuUsPerMsg: round(c100?.raw.cpuUsPerMsg, 1),
    consumeAckBrokerUsPerMsg: round(c100?.pkg.brokerUsPerMsg, 1),
    rawConsumeAckBrokerUsPerMsg: round(c100?.raw.brokerUsPerMsg, 1),
    consumeAckP10Ratio: r2(c10?.ratio),
    consumeAckP1Ratio: r2(c1?.ratio),
    consumeAck16kRatio: r2(c16?.ratio),
    consumeAckWorkRatio: r2(c100?.workRatio),
    consumeAckBatchedRatio: r2(c100?.batchedRatio),
    consumeAck16kBatchedRatio: r2(c16?.batchedRatio),
    consumeAckP1BatchedRatio: r2(c1?.batchedRatio),
    consumeAckP10BatchedRatio: r2(c10?.batchedRatio),
    rawBatchedConsumeAckCpuUsPerMsg: round(c100?.batched?.cpuUsPerMsg, 1),
    consumeAck16kWorkRatio: r2(c16?.workRatio),
    rawWorkConsumeAckCpuUsPerMsg: round(c100?.work?.cpuUsPerMsg, 1),
    retryPathRatio: r2(retry?.ratio),
    retryPathBatchedRatio: r2(retry?.batchedRatio),
    rawBatchedRetryPathCpuUsPerMsg: round(retry?.batched?.cpuUsPerMsg, 1),
    retryPathCpuUsPerMsg: round(retry?.pkg.cpuUsPerMsg, 1),
    // Client CPU per retried message: the package / raw amqplib doing the same retry (same work, settles batched), and / raw settling one by one.
    retryPathCpuRatio: r2(retry?.batched ? retry.pkg.cpuUsPerMsg / retry.batched.cpuUsPerMsg : undefined),
    retryPathRawCpuRatio: r2(retry ? retry.pkg.cpuUsPerMsg / retry.raw.cpuUsPerMsg : undefined),
    rawRetryPathCpuUsPerMsg: round(retry?.raw.cpuUsPerMsg, 1),
    retryLagP50Ms: round(l?.pkgFlow.p50, 2),
    // Broker-native delayed retry (4.3+) vs the TTL retry path, msg/s and client µs per message, by variant.
    ...nativeRetryJson(),
    retryLagAmqpP99Ms: round(l?.pkgAmqp.p99, 2),
    rawRetryLagP50Ms: round(l?.raw.p50, 2),
    rawRetryLagP99Ms: round(l?.raw.p99, 2),
    parkMsgPerSec: round(park?.pkg.msgPerSec),
    rawParkMsgPerSec: round(park?.raw.msgPerSec),
    publishMsgPerSec: round(pub?.pkg.msgPerSec),
    rawPublishMsgPerSec: round(pub?.raw.msgPerSec),
    sessionOnlyCpuUsPerMsg: round(pick('package ConsumerSession')?.cpuUsPerMsg, 1),
    nodeRedHopCpuUsPerMsg: round(pick('source → sink, consumer-shaped msg')?.cpuUsPerMsg, 1),
    heapGrowthMb: m ? round((m.end.heapUsed - m.before.heapUsed) / MB, 1) : null,
    heapTotalGrowthMb: m ? round((m.end.heapTotal - m.before.heapTotal) / MB, 1) : null,
    newSpaceGrowthMb: m?.end.newSpace !== undefined && m.before.newSpace !== undefined ? round((m.end.newSpace - m.before.newSpace) / MB, 1) : null,
    rssGrowthAfterWarmupMb: m ? round((m.end.rss - m.warm.rss) / MB, 1) : null,
    youngGenGrowthMb: m ? youngGrowth(m) : null,
    rssGrowthBeyondYoungGenMb: m ? round((m.end.rss - m.before.rss) / MB - (youngGrowth(m) ?? NaN), 1) : null,
    rawRssGrowthMb: extra.rawMemory ? round((extra.rawMemory.end.rss - extra.rawMemory.before.rss) / MB, 1) : null,
    rawYoungGenGrowthMb: extra.rawMemory ? youngGrowth(extra.rawMemory) : null,
    nodeRedOnlyRssGrowthMb: extra.nodeRedMemory ? round((extra.nodeRedMemory.end.rss - extra.nodeRedMemory.before.rss) / MB, 1) : null,
    dedupeMemoryRatio: r2(dMem?.ratio),
    dedupeRedisRatio: r2(dRedis?.ratio),
    dedupePgRatio: r2(dPg?.ratio),
    // The same pairs as the median of each repetition's own ratio (runs back to back).
    dedupeMemoryPairRatio: r2(dMem?.pairRatio),
    dedupeRedisPairRatio: r2(dRedis?.pairRatio),
    dedupePgPairRatio: r2(dPg?.pairRatio),
    dedupeRedisVsHandWrittenRatio: r2(dRedis?.batchedRatio),
    dedupeRedisHandWrittenRatio: r2(handWritten(dRedis)),
    dedupePgVsHandWrittenRatio: r2(dPg?.batchedRatio),
    dedupePgHandWrittenRatio: r2(handWritten(dPg)),
    outboxRelayRatio: r2(group('outbox relay')?.ratio),
    outboxRelayMsgPerSec: round(group('outbox relay')?.pkg.msgPerSec),
    outboxWriteRatio: r2(group('outbox write')?.ratio),
    outboxLatencyP50Ms: round(extra.outboxLatency?.p50, 2),
    outboxLatencyP99Ms: round(extra.outboxLatency?.p99, 2),
    // The relay against raw amqplib publishing the same events with confirms (per 100), and commit → consumer p99 at 1 000 events/s from 10 writers.
    outboxRelayVsPublishRatio: r2(relay?.ratio),
    outboxRelayVsPublishPairRatio: r2(relay?.pairRatio),
    outboxRelayVsHandWrittenRatio: r2(relay?.batchedRatio),
    outboxHandWrittenVsPublishRatio: r2(handWritten(relay)),
    outboxRelayDeletingVsPublishRatio: r2(group('relay vs publish, deleting sent rows')?.ratio),
    outboxLatencyP99At1000Ms: round(extra.outboxLatencyAtRate?.p99, 2),
    // (In smoke mode of PLAN.parkingGroup messages, not 100 000.)
    parkingGroup100kS: round(extra.parkingGroup?.seconds, 2),
    // What grouping takes of the Node-RED process: its peak RSS while grouping above the idle process; and that peak itself.
    parkingGroup100kRssMb: round(extra.parkingGroup ? (extra.parkingGroup.rssPeak - extra.parkingGroup.rssBefore) / MB : undefined, 1),
    parkingGroup100kRssPeakMb: round(extra.parkingGroup ? extra.parkingGroup.rssPeak / MB : undefined, 1),
    // 300 consumers' full 24 h history: the RSS it adds to a process (target ≤ 10 MiB), and the bytes of its rings.
    history300x24hRssMb: round(extra.history ? (extra.history.rssAfter - extra.history.rssBefore) / MB : undefined, 2),
    history300x24hRingsMb: round(extra.history ? extra.history.ringBytes / MB : undefined, 2),
    reps: REPS,
    smoke: SMOKE ? 1 : 0,
    ...peers,
    ...scaleJson(scale),
    ...partitionsJson(extra.partitions),
    ...degradeJson(degrade),
    ...nodeRedAloneJson([
      ['consumeAck', c100, 'Batched'],
      ['consumeAck16k', c16, 'Batched'],
      ['consumeAckP1', c1, 'Batched'],
      ['consumeAckP10', c10, 'Batched'],
      ['retryPath', retry, 'Batched'],
      ['publish', pub, 'Raw'],
    ]),
    failedSections: failures.length,
  };
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  // Everything from dist/ is required now, right after the build: a concurrent rebuild cannot break the run.
  packageNodes();
  S.consumerSessionClass();
  const names = new NameBook('bench');
  const model = await connect('bench admin');
  const ctx: S.Ctx = { url: AMQP_URL, model, body1k: makeBody(1024) };
  // Once; a second caller (main's finally while a signal's cleanup runs) waits for the same one.
  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      await stopPeerProcesses();
      const deleted = await names.cleanup();
      log(`== cleanup: deleted ${deleted.length} queue(s) named ${names.prefix}.*`);
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`== ${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  // A crash inside a node (a throw in a timer) would skip the finally below: clean up anyway.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    process.once(event, (err: unknown) => {
      log(`== ${event}: ${errorText(err)}; cleaning up`);
      void cleanup().finally(() => process.exit(1));
    });
  }

  const env = environment((model.connection as unknown as { serverProperties?: Record<string, unknown> }).serverProperties, await initBrokerCpu());
  log(`machine: ${env.machine}\nbroker: ${env.broker}\n${env.versions}\nqueues: ${names.prefix}.*${SMOKE ? '\nSMOKE mode' : ''}`);
  const admin = await model.createChannel();
  admin.on('error', () => undefined);
  installProbe(admin);

  try {
    // Consume + ack ----------------------------------------------------------------------------
    const consumeTopo = names.topology('consume');
    const bodies = new Map([1024, 16384].map((size) => [size, Buffer.from(JSON.stringify(makeBody(size)))]));
    const body = (size: number): Buffer => bodies.get(size) ?? Buffer.from(JSON.stringify(makeBody(size)));
    const loadQueue = (queue: string, size: number, count: number, props?: (i: number) => Options.Publish) => async (): Promise<void> => {
      await purge(model, queue);
      await preload(model, queue, count, body(size), props);
      await waitForCount(model, queue, count);
      await sleep(SMOKE ? 0 : 200); // let the broker finish with the preload before timing
    };
    const load = (topo: Names, size: number, count: number): Prepare => loadQueue(topo.mainQueue, size, count);

    await section('consume', async () => {
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
    });

    // Rate limit and kill switch: the rate reaching the flow at 200/s; five rules + the kill switch against none.
    await section('degrade', async () => {
      const topo = names.topology('degrade');
      await S.declareTopology(ctx, topo);
      await runDegrade({ smoke: SMOKE, reps: REPS, ctx, topo, prefetch: PREFETCH, warmup: PLAN.warmup, load: (count) => load(topo, 1024, count), log }, degrade);
    });

    let capturedMsg: Msg | undefined; // a real first-delivery msg, for the Node-RED-only runs
    const capture = (d: Msg): void => {
      capturedMsg ??= { payload: d.payload, topic: d.amqp.routingKey, amqp: d.amqp, retry: d.retry };
    };
    await section('analysis', async () => {
      if (!want('consume')) await S.declareTopology(ctx, consumeTopo);
      const q = consumeTopo.mainQueue;
      for (const [size, count] of [
        [1024, PLAN.analysis],
        [16384, PLAN.analysis16k],
      ] as const) {
        if (!wantCase(size)) continue;
        const prep = load(consumeTopo, size, count);
        const pkg =
          (options: Omit<Parameters<typeof S.pkgConsume>[1], 'topo' | 'count' | 'prefetch'> = {}): Run =>
          () =>
            S.pkgConsume(ctx, { topo: consumeTopo, count, prefetch: PREFETCH, ...options });
        const list: Variant[] = [
          ['raw amqplib, ack only', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH })],
          ['raw amqplib + JSON.parse of the body', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH, work: 'parse' })],
          ['raw amqplib + JSON.parse + the same msg (same work)', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH, work: 'msg' })],
          ['raw amqplib, same work, acked one setImmediate later (as a flow)', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH, work: 'msg-later' })],
        ];
        if (size === 1024) {
          list.push(
            ['package ConsumerSession (dist/lib), settle ack, no Node-RED', count, prep, () => S.sessionConsume(ctx, { topo: consumeTopo, count, prefetch: PREFETCH, onDelivered: capture })],
            ['package ConsumerSession, settle timeout 0 (no timer)', count, prep, () => S.sessionConsume(ctx, { topo: consumeTopo, count, prefetch: PREFETCH, settleTimeoutMs: 0 })],
          );
        }
        list.push(
          ['package nodes in Node-RED (consumer → retry-settle)', count, prep, pkg()],
          ["package nodes, decode 'buffer' (no JSON.parse)", count, prep, pkg({ consumer: { decode: 'buffer' } })],
        );
        if (size === 1024) {
          const spyCount = Math.min(count, 5000);
          list.push(
            ['package nodes, Node-RED runtimeSyncDelivery: true', count, prep, pkg({ syncDelivery: true })],
            ["package nodes, test helper's sinon spies kept", spyCount, load(consumeTopo, size, spyCount), () => S.pkgConsume(ctx, { topo: consumeTopo, count: spyCount, prefetch: PREFETCH, spies: true })],
          );
        }
        await analysisVariants(`consume ${kb(size)}`, list);
      }
    });

    // Other Node-RED AMQP packages: each contestant in its own process per run (lib/peers.ts) ------
    await section('peers', async () => {
      const count = PLAN.peers;
      const plain = names.queue('peers-plain');
      await admin.assertQueue(plain, { durable: true });
      const persistent = (i: number): Options.Publish => ({ ...messageProperties(i), deliveryMode: 2 });
      const peers = await preparePeers({ url: AMQP_URL, plainQueue: plain, topology: names.topology('peers'), prefetch: PREFETCH, log });
      try {
        const list = peers.contestants.map((c): Variant => [c.label, count, loadQueue(c.queue, 1024, count, persistent), () => c.run(count)]);
        const runs = await variants('peers', list);
        const rows = peers.contestants.map((c, i): PeerRow => ({ label: c.label, version: c.version(), ack: c.ack, key: c.key, ratio: NaN, batchedRatio: NaN, ...summarize(runs[i]!) }));
        const batched = rows.find((r) => r.key === BATCHED_PEER_KEY);
        for (const row of rows) {
          row.ratio = row.msgPerSec / rows[0]!.msgPerSec;
          row.batchedRatio = batched ? row.msgPerSec / batched.msgPerSec : NaN;
        }
        extra.peers = { rows, skipped: peers.skipped };
      } finally {
        peers.dispose();
        await purge(model, plain);
      }
    });

    // Retry path ---------------------------------------------------------------------------------
    await section('retry', async () => {
      const topo = names.topology('retry');
      await S.declareTopology(ctx, topo);
      const count = PLAN.retry;
      // Warm-up of the retry path's own code (dead-letter settles, x-death reading), not recorded:
      // the consume section's warm-up does not reach it, and a cold first run is JIT, not per message.
      for (const side of ['raw-batched', 'nodered', 'pkg'] as const) {
        await load(topo, 1024, PLAN.warmup)();
        await S.retryThroughput(ctx, side, { topo, count: PLAN.warmup, prefetch: PREFETCH });
      }
      await pair(
        'retry path',
        '1 KB, prefetch 100, 1 retry',
        count,
        load(topo, 1024, count),
        () => S.retryThroughput(ctx, 'raw', { topo, count, prefetch: PREFETCH }),
        () => S.retryThroughput(ctx, 'pkg', { topo, count, prefetch: PREFETCH }),
        undefined,
        () => S.retryThroughput(ctx, 'raw-batched', { topo, count, prefetch: PREFETCH }),
        () => S.retryThroughput(ctx, 'nodered', { topo, count, prefetch: PREFETCH }),
      );
      const { count: lagCount, rate } = PLAN.lag;
      const stats = (values: number[]): LagStats => ({ p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) });
      const perRep: { raw: LagStats[]; pkgAmqp: LagStats[]; pkgFlow: LagStats[] } = { raw: [], pkgAmqp: [], pkgFlow: [] };
      for (let rep = 0; rep < REPS; rep += 1) {
        await purge(model, topo.mainQueue);
        const raw = await S.retryLag(ctx, 'raw', { topo, count: lagCount, rate, prefetch: PREFETCH, ttlMs: TTL_MS, tag: `raw${rep}` });
        perRep.raw.push(stats(raw.amqpLag));
        await purge(model, topo.mainQueue);
        const pkg = await S.retryLag(ctx, 'pkg', { topo, count: lagCount, rate, prefetch: PREFETCH, ttlMs: TTL_MS, tag: `pkg${rep}` });
        perRep.pkgAmqp.push(stats(pkg.amqpLag));
        perRep.pkgFlow.push(stats(pkg.flowLag));
        const r = perRep.raw.at(-1)!;
        const f = perRep.pkgFlow.at(-1)!;
        log(`   retry lag #${rep + 1}: raw p50 ${r.p50.toFixed(1)} p99 ${r.p99.toFixed(1)} ms; package (flow) p50 ${f.p50.toFixed(1)} p99 ${f.p99.toFixed(1)} ms (${pkg.flowLag.length} samples)`);
      }
      const med = (list: LagStats[]): LagStats => ({ p50: median(list.map((s) => s.p50)), p99: median(list.map((s) => s.p99)), max: median(list.map((s) => s.max)) });
      extra.lag = { count: lagCount, rate, raw: med(perRep.raw), pkgAmqp: med(perRep.pkgAmqp), pkgFlow: med(perRep.pkgFlow) };
    });

    // Broker-native delayed retry (RabbitMQ 4.3+) vs the TTL retry path --------------------------
    await section('native-retry', async () => {
      const skip = nativeRetrySkip(brokerVersion(model));
      if (skip !== undefined) {
        log(`   skipped: ${skip}`);
        extra.nativeRetry = { skipped: skip };
        return;
      }
      const count = PLAN.nativeRetry;
      const topos = NATIVE_RETRY_VARIANTS.map((v) => names.topology(`native-${v.key}`));
      for (const [i, v] of NATIVE_RETRY_VARIANTS.entries()) {
        const topo = topos[i]!;
        await declareNativeRetry(ctx, topo, v);
        // Warm-up of the variant's own settle path, not recorded.
        await load(topo, 1024, PLAN.warmup)();
        await nativeRetryRun(ctx, topo, v, PLAN.warmup, PREFETCH);
      }
      const runs = await variants(
        'native-retry',
        NATIVE_RETRY_VARIANTS.map((v, i): Variant => [v.label, count, load(topos[i]!, 1024, count), () => nativeRetryRun(ctx, topos[i]!, v, count, PREFETCH)]),
      );
      extra.nativeRetry = { count, rows: NATIVE_RETRY_VARIANTS.map((v, i) => ({ label: v.label, ...summarize(runs[i]!) })) };
    });

    // Park path ----------------------------------------------------------------------------------
    await section('park', async () => {
      const topo = names.topology('park');
      await S.declareTopology(ctx, topo);
      const count = PLAN.park;
      const prep = async (): Promise<void> => {
        await purge(model, topo.parkingQueue);
        await load(topo, 1024, count)();
      };
      await pair(
        'park path',
        '1 KB, prefetch 100',
        count,
        prep,
        () => S.rawPark(ctx, { topo, count, prefetch: PREFETCH }),
        () => S.pkgPark(ctx, { topo, count, prefetch: PREFETCH }),
      );
      await purge(model, topo.parkingQueue);
    });

    // Publish with confirms ----------------------------------------------------------------------
    await section('publish', async () => {
      const queue = names.queue('publish');
      await admin.assertQueue(queue, { durable: true });
      const count = PLAN.publish;
      await pair(
        'publish+confirm',
        `1 KB, ${WINDOW} in flight`,
        count,
        () => purge(model, queue),
        () => S.rawPublish(ctx, { queue, count, window: WINDOW, payload: ctx.body1k }),
        () => S.pkgPublish(ctx, { queue, count, window: WINDOW, payload: ctx.body1k }),
        undefined,
        undefined,
        () => S.nodeRedAlonePublish(ctx, { queue, count, window: WINDOW, payload: ctx.body1k }),
      );
      await purge(model, queue);
    });

    // Node-RED's own cost ------------------------------------------------------------------------
    // Deduplication: the package consuming with a store against the package without one (every key new).
    await section('dedupe', async () => {
      const why = await D.storesAnswer();
      if (why) throw new Error(`skipped: ${why}`);
      const topo = names.topology('dedupe');
      await S.declareTopology(ctx, topo);
      const count = PLAN.dedupe;
      for (const kind of ['memory', 'redis', 'postgres'] as const) {
        // Every run its own message ids: a key seen in an earlier run would be a duplicate.
        const prepFor = (n: number) => (): Promise<void> => {
          const run = Math.random().toString(36).slice(2, 8);
          return loadQueue(topo.mainQueue, 1024, n, (i) => ({ ...messageProperties(i), messageId: `${run}-${i}` }))();
        };
        const none = (n: number) => () => D.dedupeConsume(ctx, { topo, count: n, prefetch: PREFETCH, kind: 'none' });
        const withStore = (n: number) => () => D.dedupeConsume(ctx, { topo, count: n, prefetch: PREFETCH, kind });
        // Redis and PostgreSQL also against a careful hand-written idempotent consumer (raw amqplib + ioredis / pg, the same protocol).
        const byHand = (n: number) => (kind === 'memory' ? undefined : () => rawDedupe({ kind, queue: topo.mainQueue, count: n, prefetch: PREFETCH }));
        // Warm-up of each side (JIT, the store's code paths and connections), not recorded: the first timed run is not the cold one.
        for (const side of [none(PLAN.warmup), withStore(PLAN.warmup), byHand(PLAN.warmup)]) {
          if (!side) continue;
          await prepFor(PLAN.warmup)();
          await side();
        }
        await pair('dedupe', `${kind} vs none, 1 KB, prefetch ${PREFETCH}`, count, prepFor(count), none(count), withStore(count), undefined, byHand(count));
      }
    });

    // The outbox: the relay against a hand-written relay, the write node against the same transaction by hand, commit → queue latency.
    await section('outbox', async () => {
      const why = await D.storesAnswer();
      if (why) throw new Error(`skipped: ${why}`);
      const queue = `${names.prefix}.outbox-events`;
      const table = `bench_outbox_${Math.random().toString(36).slice(2, 8)}`;
      const business = `${table}_orders`;
      const adminCh = await model.createChannel();
      await adminCh.assertQueue(queue, { durable: false });
      try {
        const count = PLAN.outboxRelay;
        const prep = async (): Promise<void> => {
          await purge(model, queue);
          await D.prepareOutbox(table);
        };
        const event = body(1024);
        await pair(
          'outbox relay',
          `1 KB, ${count} rows, batch 100`,
          count,
          prep,
          () => D.rawRelay({ model, table, queue, count, body: event }),
          () => D.pkgRelay(ctx, { table, queue, count, body: event }),
        );
        // The same relay from the NOTIFY on (the rows written before the clock starts) against raw amqplib publishing the same events with confirms.
        await pair(
          'relay vs publish',
          '1 KB, confirms per 100',
          count,
          prep,
          () => P.rawPublishEvents({ model, queue, count, body: event, batch: 100 }),
          () => P.pkgRelayFromNotify(ctx, { table, queue, count, body: event }),
          undefined,
          // A careful hand-written pipelined relay on the same table.
          () => rawPipelinedRelay({ model, table, queue, count, body: event }),
        );
        // The same with deleteSent: a confirmed row deleted instead of marked sent.
        await pair(
          'relay vs publish, deleting sent rows',
          '1 KB, confirms per 100',
          count,
          prep,
          () => P.rawPublishEvents({ model, queue, count, body: event, batch: 100 }),
          () => P.pkgRelayFromNotify(ctx, { table, queue, count, body: event, deleteSent: true }),
        );
        const writes = PLAN.outboxWrite;
        const payload = JSON.parse(body(1024).toString()) as unknown;
        await pair(
          'outbox write',
          `1 INSERT + event, 10 in flight`,
          writes,
          () => D.prepareWrite(table, business),
          () => D.rawWrite({ table, business, count: writes, window: 10, payload }),
          () => D.pkgWrite({ table, business, count: writes, window: 10, payload }),
        );
        await D.prepareWrite(table, business);
        await D.dropTable(table);
        extra.outboxLatency = await D.outboxLatency(ctx, { model, table, business, queue: `${queue}.latency`, count: PLAN.outboxLatency });
        log(`   outbox latency (write answered → event at a consumer, NOTIFY): p50 ${extra.outboxLatency.p50.toFixed(1)} ms, p99 ${extra.outboxLatency.p99.toFixed(1)} ms`);
        await D.prepareOutbox(table);
        const { writers, rate, seconds } = PLAN.outboxRate;
        const atRate = await P.outboxLatencyAtRate(ctx, { model, table, queue: `${queue}.rate`, writers, rate, seconds, body: event });
        extra.outboxLatencyAtRate = atRate;
        log(`   outbox latency at ${rate}/s from ${writers} writers (COMMIT → event at a consumer; ${atRate.count} events, ${Math.round(atRate.writtenPerSec)}/s written): p50 ${atRate.p50.toFixed(1)} ms, p99 ${atRate.p99.toFixed(1)} ms`);
      } finally {
        await D.dropTable(table).catch(() => undefined);
        await D.dropTable(business).catch(() => undefined);
        await adminCh.deleteQueue(queue).catch(() => undefined);
        await adminCh.close().catch(() => undefined);
      }
    });

    await section('nodered', async () => {
      const count = PLAN.nodered;
      const payload = JSON.parse(JSON.stringify(ctx.body1k));
      // What retry-consumer sends for a first delivery (see README "retry-consumer"), or a captured one.
      const template: Msg = capturedMsg ?? {
        payload,
        topic: 'bench.consume',
        amqp: {
          deliveryId: 'config:1',
          queue: 'bench.consume',
          exchange: '',
          routingKey: 'bench.consume',
          redelivered: false,
          deliveryTag: 1,
          consumerTag: 'amq.ctag-bench',
          properties: { contentType: 'application/json', deliveryMode: 1, correlationId: 'c-1', messageId: 'm-1', timestamp: 1714564800 },
          headers: { source: 'bench' },
        },
        retry: { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] },
      };
      const consumerShaped = (): Msg => ({ payload: template.payload, topic: template.topic, amqp: template.amqp, retry: template.retry });
      const minimal = (): Msg => ({ payload: 'x' });
      const none = (): Promise<void> => Promise.resolve();
      const spyCount = Math.min(count, 10000);
      await analysisVariants('Node-RED only', [
        ['source → sink, consumer-shaped msg (no broker, no package)', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: consumerShaped })],
        ['source → sink, {payload:"x"}', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: minimal })],
        ['source → 2 sinks (fan-out: 1 deep clone), consumer-shaped msg', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: consumerShaped, fanout: true })],
        ['source → 2 sinks (fan-out), {payload:"x"}', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: minimal, fanout: true })],
        ["source → sink, consumer-shaped, test helper's spies kept", spyCount, none, () => S.nodeRedPair({ count: spyCount, window: WINDOW, makeMsg: consumerShaped, spies: true })],
      ]);
    });

    // Memory ---------------------------------------------------------------------------------------
    /**
     * One memory run in a child process of its own: the package's consumer → ack flow, raw amqplib
     * doing the same work, or that raw consumer's msg through one hop of the same Node-RED runtime. The parent publishes 10 × 20 000 messages; the child reports memory after a
     * full GC before any message, after the first batch and at the end.
     */
    async function memoryRun(topo: Names, mode: 'package' | 'raw' | 'nodered'): Promise<MemoryRun> {
      const { batches, batchSize } = PLAN.memory;
      const child = fork(path.join(here, 'lib', 'memory-child.ts'), [], {
        execArgv: ['--expose-gc', '--import', 'tsx'],
        env: { ...process.env, AMQP_URL, BENCH_MEM_TOPOLOGY: JSON.stringify(topo), BENCH_MEM_PREFETCH: String(PREFETCH), BENCH_MEM_MODE: mode },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      type Reply = { type: string; error?: string; mem?: MemorySnapshot; acks?: number };
      const replies: Reply[] = [];
      let waiter: (() => void) | undefined;
      child.on('message', (reply) => {
        const m = reply as Reply;
        if (m.type === 'error') log(`   memory child: ${m.error}`);
        replies.push(m);
        if (waiter) waiter();
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const next = async (type: string, ms = 120_000): Promise<Reply> => {
        const deadline = Date.now() + ms;
        for (;;) {
          const i = replies.findIndex((m) => m.type === type || m.type === 'error');
          if (i >= 0) {
            const m = replies.splice(i, 1)[0]!;
            if (m.type === 'error') throw new Error(`memory child: ${String(m.error)}`);
            return m;
          }
          if (Date.now() > deadline) throw new Error(`memory child: no '${type}' within ${ms / 1000} s`);
          await withTimeout(
            Promise.race([
              new Promise<void>((resolve) => {
                waiter = resolve;
              }),
              exited.then(() => Promise.reject(new Error('memory child exited'))),
            ]),
            ms,
            `memory child '${type}'`,
          );
        }
      };
      try {
        await next('ready');
        child.send({ cmd: 'snapshot' });
        const before = (await next('snapshot')).mem!;
        let warm: MemorySnapshot | undefined;
        let total = 0;
        for (let b = 0; b < batches; b += 1) {
          await preload(model, topo.mainQueue, batchSize, body(1024));
          total += batchSize;
          child.send({ cmd: 'wait', acks: total });
          await next('acked', Math.max(120_000, batchSize * 10));
          if (b === 0) {
            child.send({ cmd: 'snapshot' });
            warm = (await next('snapshot')).mem!;
          }
          log(`   memory (${mode}): ${total} msgs consumed and acked`);
        }
        child.send({ cmd: 'snapshot' });
        const end = (await next('snapshot')).mem!;
        log(`   memory (${mode}): rss ${(before.rss / MB).toFixed(1)} → ${(end.rss / MB).toFixed(1)} MiB, heap ${(before.heapUsed / MB).toFixed(1)} → ${(end.heapUsed / MB).toFixed(1)} MiB`);
        return { before, warm: warm ?? before, end, total, batchSize };
      } finally {
        if (child.connected) child.send({ cmd: 'exit' });
        await withTimeout(exited, 15_000, 'memory child exit').catch(() => child.kill());
      }
    }

    await section('partitions', async () => {
      extra.partitions = await runPartitions({ ctx, model, one: names.topology('ordered1'), partitioned: names.topology('ordered8'), counts: PLAN.partitions, reps: REPS, log });
    });

    await section('scale', () => runScale({ smoke: SMOKE, reps: REPS, ctx, names, log }, scale));

    await section('parking', async () => {
      const topo = names.topology('pgroup');
      await S.declareTopology(ctx, topo);
      extra.parkingGroup = await parkingGroupRun(model, topo, PLAN.parkingGroup, body(1024), log);
      const g = extra.parkingGroup;
      log(`   parking groups: ${g.count} grouped in ${g.seconds.toFixed(2)} s, Node-RED rss peak ${(g.rssPeak / MB).toFixed(1)} MiB (+${((g.rssPeak - g.rssBefore) / MB).toFixed(1)})`);
      await purge(model, topo.parkingQueue);
    });

    await section('history', async () => {
      extra.history = await historyMemoryRun();
      const h = extra.history;
      log(`   history: ${h.consumers} consumers × ${h.minutes} min, rss +${((h.rssAfter - h.rssBefore) / MB).toFixed(2)} MiB, rings ${(h.ringBytes / MB).toFixed(2)} MiB`);
    });

    await section('memory', async () => {
      const topo = names.topology('memory');
      await S.declareTopology(ctx, topo);
      extra.memory = await memoryRun(topo, 'package');
      extra.rawMemory = await memoryRun(topo, 'raw');
      extra.nodeRedMemory = await memoryRun(topo, 'nodered');
    });
  } finally {
    await cleanup();
    await model.close().catch(() => undefined);
  }

  printReport(env);
  process.stdout.write(`${JSON.stringify(summaryJson())}\n`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`bench failed: ${errorText(err)}`);
    process.stdout.write(`${JSON.stringify({ ...summaryJson(), error: err instanceof Error ? err.message : String(err) })}\n`);
    process.exit(1);
  },
);
