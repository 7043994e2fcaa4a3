/**
 * `npm run soak -- --minutes N --seed S [--rate R]` (issue 54): the packed package in two Node-RED
 * processes under a steady load for N minutes while faults drawn from the seed hit the broker, the
 * processes, the stores and the downstream; then a drain and the reconciliation of every message. The
 * seed is printed at the start and the end; a failing run prints the command that replays its schedule.
 * See docs/faults.md#the-soak.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pause } from '../faults/fault-broker';
import { latestStatuses, markedLines, STATUS_MARK, type NodeStatusLine } from '../faults/fault-flow';
import { runSchedule } from './chaos';
import { drainAll, startLoad, stopLoad } from './load';
import { checkTable, circuitTrips, duplicates, faultTable, reconcile, type Observations } from './reconcile';
import { retainedCsv, retainedSamples, rssCsv, RssMonitor, rssGrowth, type RssSample } from './rss';
import { describeSchedule, drawSchedule, parseArgs, replayCommand, type ScheduledFault, type SoakArgs } from './schedule';
import { setUp, tearDown, type Soak } from './setup';

const LOG_DIR = path.join(os.tmpdir(), 'rabbitmq-retry-soak');
/** The drain's limit: every retry tier of the work stream twice over, and more for a loaded machine. */
const DRAIN_LIMIT_MS = 10 * 60_000;

/** RSS growth counts from this long after a process started (issue 54: after the first 5 minutes). */
const RSS_WARMUP_MS = 5 * 60_000;

/** The consumers whose latest status is not a consuming one (a dot, not red): stuck after the drain. */
function unhealthy(lines: string[]): string[] {
  const latest = latestStatuses(lines);
  return ['s-consumer', 's-econsumer', 'p-consumer'].flatMap((id) => {
    const status = latest.get(id);
    return status?.shape === 'dot' && status.fill !== 'red' ? [] : [`${id} ${status?.fill ?? 'no'} ${status?.shape ?? 'status'} ${status?.text ?? ''}`.trim()];
  });
}

/** The consumers of the running processes whose latest status is not a consuming one. */
const notConsuming = (soak: Soak): string[] => soak.pair.running.flatMap((red, i) => unhealthy(red.lines()).map((s) => `Node-RED ${i + 1}: ${s}`));

const log = (line: string): void => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The load for the run's minutes while the schedule runs; then the load stopped, the drain, what was seen. */
type RunResult = { observations: Observations; t0: number; rss: readonly RssSample[]; retained: ReturnType<typeof retainedSamples> };

async function soakRun(soak: Soak, args: SoakArgs, schedule: readonly ScheduledFault[]): Promise<RunResult> {
  const rss = new RssMonitor();
  rss.start(() => soak.pair.processes.map((red) => red?.child.pid));
  const load = startLoad(soak, args.rate);
  const t0 = Date.now();
  const faults = runSchedule(schedule, t0, { ...soak, flow: soak.flow }, log);
  const progress = setInterval(() => log(`+${((Date.now() - t0) / 1000).toFixed(0)} s: ${load.work.confirmed.size + load.outbox.confirmed.size} work confirmed, ${soak.downstream.effects.length} effects; ${load.ordered.confirmed.size} ordered confirmed`), 30_000);
  await pause(args.minutes * 60_000);
  clearInterval(progress);
  const runs = await faults;
  log(`load ends: ${load.work.started + load.outbox.started + load.ordered.started} messages started; waiting for their confirms`);
  await stopLoad(load);
  log('draining');
  const seen = await drainAll(soak, load, DRAIN_LIMIT_MS, () => notConsuming(soak));
  rss.stop();
  const statuses = notConsuming(soak);
  const trips = [0, 1].reduce((n, i) => n + circuitTrips(markedLines<NodeStatusLine>(soak.pair.output(i).split('\n'), STATUS_MARK)), 0);
  const retained = [0, 1].flatMap((i) => retainedSamples(soak.pair.output(i), i));
  const memory = { rssGrowthMiB: rssGrowth(rss.samples, 2, RSS_WARMUP_MS), retainedGrowthMiB: rssGrowth(retained, 2, RSS_WARMUP_MS) };
  return { observations: { ...seen, faults: runs, ...memory, statuses, circuitTrips: trips }, t0, rss: rss.samples, retained };
}

/**
 * The Node-RED logs and, after a run, the RSS samples (rss.csv: seconds from the load's start, slot, pid,
 * MiB) and what each process retained after each full collection (retained.csv, with its RSS then).
 */
function writeLogs(soak: Partial<Soak>, seed: number, run?: Pick<RunResult, 't0' | 'rss' | 'retained'>): string {
  // One folder per run: a replay of the seed keeps the failing run's logs.
  const dir = path.join(LOG_DIR, `${seed}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  for (const i of [0, 1]) writeFileSync(path.join(dir, `node-red-${i + 1}.log`), soak.pair?.output(i) ?? '');
  if (run) writeFileSync(path.join(dir, 'rss.csv'), rssCsv(run.rss, run.t0));
  if (run) writeFileSync(path.join(dir, 'retained.csv'), retainedCsv(run.retained, run.t0));
  return dir;
}

function report(args: SoakArgs, o: Observations, t0: number, logs: string): boolean {
  const checks = reconcile(o);
  const ok = checks.every((c) => c.ok);
  console.log(`\n## soak, seed ${args.seed}, ${args.minutes} min, ${args.rate} msg/s\n\n${faultTable(o, t0)}\n\n${checkTable(checks)}\n`);
  const tenths = (growth: ReadonlyArray<number | undefined>): Array<number | null> => growth.map((g) => (g === undefined ? null : Number(g.toFixed(1))));
  const [rss, retained] = [tenths(o.rssGrowthMiB), tenths(o.retainedGrowthMiB)];
  const counts = { circuitTrips: o.circuitTrips, confirmed: o.confirmed.size, effects: o.effects.length, parked: o.parked.length, orderedConfirmed: o.orderedConfirmed.size, orderedEffects: o.orderedEffects.length, left: o.left };
  const faults = o.faults.map((f) => ({ kind: f.fault.kind, process: f.fault.process, at: Math.round((f.start - t0) / 1000), lastedS: (f.end - f.start) / 1000, error: f.error }));
  console.log(`SOAK_RESULT ${JSON.stringify({ seed: args.seed, minutes: args.minutes, rate: args.rate, ok, counts, retainedGrowthMiB: retained, rssGrowthMiB: rss, faults, failed: checks.filter((c) => !c.ok).map((c) => c.name) })}`);
  for (const id of duplicates(o.effects.map((e) => e.id)).slice(0, 20)) {
    console.log(`repeated effect ${id} at ${o.effects.filter((e) => e.id === id).map((e) => `+${((e.at - t0) / 1000).toFixed(1)} s (${e.via ?? '?'})`).join(', ')}`);
  }
  for (const id of duplicates(o.parked.map((p) => p.id)).slice(0, 20)) {
    console.log(`repeated park ${id} at ${o.parked.filter((p) => p.id === id).map((p) => (p.at === undefined ? '?' : `+${((p.at - t0) / 1000).toFixed(1)} s`)).join(', ')}`);
  }
  console.log(`\nNode-RED logs, RSS and retained-memory samples: ${logs}`);
  return ok;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const schedule = drawSchedule({ seed: args.seed, minutes: args.minutes });
  log(`seed ${args.seed}: ${args.minutes} min at ${args.rate} msg/s, ${schedule.length} faults\n${describeSchedule(schedule).join('\n')}`);
  const soak: Partial<Soak> = {};
  const interrupted = (): void => void tearDown(soak).finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let ok = false;
  try {
    const ready = await setUp(soak, log);
    const run = await soakRun(ready, args, schedule);
    await ready.pair.stop();
    ok = report(args, run.observations, run.t0, writeLogs(soak, args.seed, run));
  } catch (err) {
    console.error(`soak failed: ${(err as Error).stack ?? String(err)}`);
    if (soak.pair) console.error(`Node-RED logs: ${writeLogs(soak, args.seed)}`);
  } finally {
    await tearDown(soak);
  }
  log(`seed ${args.seed}: ${ok ? 'passed' : 'FAILED'}`);
  if (!ok) console.log(`replay: ${replayCommand(args)}`);
  return ok ? 0 : 1;
}

void main().then((code) => process.exit(code));
