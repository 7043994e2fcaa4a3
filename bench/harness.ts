/**
 * How the sections measure: a section run with its failure caught, a pair (raw and package, and
 * their companions, alternated `REPS` times) added to the main table, single-sided variants taken
 * round-robin.
 */
import { errorText, fullGc, median, round, type RunResult } from './lib/common';
import { REPS, log, want } from './config';
import type { Prepare, Results, Row, Run, Summary, Variant } from './types';

export function summarize(runs: RunResult[]): Summary {
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
  (Number.isFinite(r.settleFramesPerMsg) ? `, ${r.settleFramesPerMsg?.toFixed(3)} settle frames/msg` : '') +
  (r.gcUsPerMsg !== undefined && Number.isFinite(r.gcUsPerMsg) ? `, GC ${r.gcUsPerMsg.toFixed(1)} µs/msg (${r.majorGcs ?? 0} full)` : '') +
  (r.deliveriesPerTurn !== undefined && Number.isFinite(r.deliveriesPerTurn) ? `, ${r.deliveriesPerTurn.toFixed(1)} deliveries/turn` : '') +
  (r.mainThreadUsPerMsg !== undefined && Number.isFinite(r.mainThreadUsPerMsg) ? `, main thread ${r.mainThreadUsPerMsg.toFixed(1)} µs/msg` : '') +
  (r.warmUpCpuUsPerMsg !== undefined && Number.isFinite(r.warmUpCpuUsPerMsg) ? `, warm-up ${r.warmUpCpuUsPerMsg.toFixed(1)} µs/msg` : '');

/** Runs one section when `--only=` wants it; a failure is logged and recorded, and the run goes on. */
export async function section(results: Results, name: string, work: () => Promise<void>): Promise<void> {
  if (!want(name)) return;
  const t0 = Date.now();
  log(`== ${name}`);
  try {
    await work();
  } catch (err) {
    results.failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    log(`!! ${name} failed: ${errorText(err)}`);
  }
  log(`   (${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** A pair's row from its sides' runs, by side name. */
function pairRow(group: string, label: string, count: number, byName: Map<string, RunResult[]>): Row {
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
  return row;
}

/**
 * Runs raw and package (and, when given, raw doing the same work as the package, the same with
 * batched acks, and Node-RED alone) alternately, `REPS` times each, and adds a table row.
 */
export async function pair(results: Results, group: string, label: string, count: number, prepare: Prepare, raw: Run, pkg: Run, work?: Run, batched?: Run, nodeRed?: Run): Promise<Row> {
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
  const row = pairRow(group, label, count, new Map(sides.map(([name, , runs]) => [name, runs])));
  results.rows.push(row);
  return row;
}

/**
 * Single-sided runs of several variants, taken round-robin (variant 1, 2, 3, 1, 2, 3, ...) so that
 * drift on a shared machine spreads over all of them.
 */
export async function variants(group: string, list: Variant[]): Promise<RunResult[][]> {
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
export async function analysisVariants(results: Results, group: string, list: Variant[]): Promise<void> {
  const runs = await variants(group, list);
  for (const [i, [label, count]] of list.entries()) results.analysis.push({ group, label, count, ...summarize(runs[i]!) });
}
