/** The printed report: the pairs table, then each section's own table or lines, then what failed. */
import os from 'node:os';
import { AMQP_URL } from './lib/common';
import { versions } from './lib/nodered';
import { PEERS_DIR } from './lib/peers';
import { scaleTable } from './lib/scale-scenarios';
import { degradeTable } from './lib/degrade-scenarios';
import { partitionsTable } from './lib/partitions';
import { batchTable } from './lib/batch-result';
import { MB, PLAN, PREFETCH, REPS, SMOKE, TTL_MS } from './config';
import type { Environment } from './environment';
import type { Extra, MemoryRun, MemorySnapshot, Results, Row, Single } from './types';

function pad(text: string | number, width: number, right = false): string {
  const s = String(text);
  return right ? s.padStart(width) : s.padEnd(width);
}

function fmt(x: number | undefined, digits = 0): string {
  return x !== undefined && Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';
}

function header(env: Environment): string[] {
  return [
    '',
    `# node-red-contrib-rabbitmq-retry benchmark${SMOKE ? ' (SMOKE: tiny counts, 1 repetition — numbers are not meaningful)' : ''}`,
    `machine:  ${env.machine}`,
    `broker:   ${env.broker}`,
    `software: ${env.versions}`,
    `runtime:  ${env.runtime}`,
    `method:   median of ${REPS} run(s) per side, raw and package alternating; consume runs start on a preloaded queue (transient ~1 KB / 16 KB JSON);`,
    "          timed from the delivery after the first tenth (each run's warm-up) to the N-th ack (publish: first publish to N-th confirm, or to the N-th msg at the next node); CPU = this process, user+system, per message.",
    '',
  ];
}

/** The main table: one row per pair, then what its columns mean. */
function pairsTable(rows: Row[]): string[] {
  const out: string[] = [];
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
  return out;
}

/** Other Node-RED AMQP packages, one process each. */
function peersTable(env: Environment, peers: NonNullable<Extra['peers']>): string[] {
  const out: string[] = [];
  const { rows: peerRows, skipped } = peers;
  const local = env.brokerPid ? `on the same ${os.availableParallelism()}-core machine` : `at ${new URL(AMQP_URL).host}`;
  out.push('');
  out.push(
    `other Node-RED AMQP packages: one Node-RED ${versions.nodeRed} process per package, ${env.brokerProduct} ${local}, a queue preloaded with ${fmt(PLAN.peersWarmUp + PLAN.peers)} persistent 1 KB JSON messages, prefetch ${PREFETCH},`,
  );
  out.push(`  each message acked by the package's own mechanism; packages alternated, ${REPS} run(s) each, median (min–max). CPU is the Node-RED process's user+system time per message`);
  out.push(
    `  (raw amqplib: a plain node process). Each run is a fresh process: its first ${fmt(PLAN.peersWarmUp)} deliveries are its warm-up (V8 compiling the hot path; their CPU per message is the warm-up column), the next ${fmt(PLAN.peers)} are timed.`,
  );
  out.push('  main thread: the CPU of the process\'s main thread alone (the rest is V8\'s compiler and GC helper threads). The other packages consume a plain durable queue.');
  const table = [
    ['package', 'version (amqplib)', 'ack', 'msg/s median (min–max)', 'vs raw', 'vs raw batched', 'CPU µs/msg', 'main thread', 'warm-up µs/msg', 'broker µs/msg'],
    ...peerRows.map((p) => {
      const runs = p.runs.filter((r): r is number => r !== null);
      const range = runs.length > 1 ? ` (${fmt(Math.min(...runs))}–${fmt(Math.max(...runs))})` : '';
      return [p.label, p.version, p.ack, `${fmt(p.msgPerSec)}${range}`, fmt(p.ratio, 2), fmt(p.batchedRatio, 2), fmt(p.cpuUsPerMsg, 1), fmt(p.mainThreadUsPerMsg, 1), fmt(p.warmUpCpuUsPerMsg, 1), fmt(p.brokerUsPerMsg, 1)];
    }),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((cells) => cells[i]!.length)) + 2);
  // Text columns left-aligned, figures right-aligned.
  for (const cells of table) out.push(`  ${cells.map((c, i) => (i < 3 ? pad(c, widths[i]!) : pad(c, widths[i]!, true))).join('')}`);
  out.push(`  same work: JSON.parse of the body and the msg the package builds (payload, amqp, retry). vs raw: median msg/s / raw amqplib's; vs raw batched: / raw amqplib doing the same work with its acks batched per turn.`);
  if (peerRows.some((p) => p.version.includes('*'))) out.push(`  * built from its source (not on the registry mirror) in ${PEERS_DIR}/from-source: docs/benchmark.md`);
  for (const note of skipped) out.push(`  not measured: ${note}`);
  return out;
}

function nativeRetryLines(nr: NonNullable<Extra['nativeRetry']>): string[] {
  if ('skipped' in nr) return ['', `broker-native delayed retry: not measured: ${nr.skipped}`];
  return [
    '',
    `broker-native delayed retry vs the TTL retry path (the package; 1 KB, prefetch ${PREFETCH}, each of ${nr.count} msgs retried once after 200 ms, then acked; median of runs):`,
    ...nr.rows.map((r) => `  ${pad(r.label, 60)}${pad(fmt(r.msgPerSec), 9, true)} msg/s${pad(fmt(r.cpuUsPerMsg, 1), 8, true)} node µs/msg${Number.isFinite(r.brokerUsPerMsg) ? `${pad(fmt(r.brokerUsPerMsg, 1), 8, true)} broker µs/msg` : ''}`),
  ];
}

function lagLines(l: NonNullable<Extra['lag']>): string[] {
  return [
    '',
    `retry lag beyond the ${TTL_MS} ms TTL (nack → redelivery − TTL; ${l.count} msgs at ${l.rate}/s per run, median of runs):`,
    `  raw amqplib:                         p50 ${fmt(l.raw.p50, 1)} ms   p99 ${fmt(l.raw.p99, 1)} ms   max ${fmt(l.raw.max, 1)} ms`,
    `  package, at amqplib's callback:      p50 ${fmt(l.pkgAmqp.p50, 1)} ms   p99 ${fmt(l.pkgAmqp.p99, 1)} ms   max ${fmt(l.pkgAmqp.max, 1)} ms`,
    `  package, msg reaching the flow node: p50 ${fmt(l.pkgFlow.p50, 1)} ms   p99 ${fmt(l.pkgFlow.p99, 1)} ms   max ${fmt(l.pkgFlow.max, 1)} ms`,
  ];
}

function analysisLines(analysis: Single[]): string[] {
  const out = ['', 'where the time goes (single-sided runs, same broker):'];
  for (const a of analysis) {
    const broker = Number.isFinite(a.brokerUsPerMsg) ? `${pad(fmt(a.brokerUsPerMsg, 1), 8, true)} broker µs/msg` : '';
    out.push(`  ${pad(a.group, 14)}${pad(a.label, 62)}${pad(fmt(a.msgPerSec), 10, true)} msg/s${pad(fmt(a.cpuUsPerMsg, 1), 8, true)} node µs/msg${broker}`);
  }
  return out;
}

/** One memory run: its three snapshots and what grew. */
function memoryBlock(title: string, m: MemoryRun): string[] {
  const line = (label: string, s: MemorySnapshot): string =>
    `  ${pad(label, 34)}rss ${pad(fmt(s.rss / MB, 1), 7, true)} MiB   heap used ${pad(fmt(s.heapUsed / MB, 1), 6, true)} MiB   heap total ${pad(fmt(s.heapTotal / MB, 1), 6, true)} MiB   young gen ${pad(fmt((s.newSpacePhysical ?? NaN) / MB, 1), 5, true)} MiB   external ${pad(fmt(s.external / MB, 1), 6, true)} MiB`;
  const young = ((m.end.newSpacePhysical ?? NaN) - (m.before.newSpacePhysical ?? NaN)) / MB;
  const rss = (m.end.rss - m.before.rss) / MB;
  return [
    '',
    title,
    line('ready, before any message', m.before),
    line(`after ${fmt(m.batchSize)} msgs (warm)`, m.warm),
    line(`after ${fmt(m.total)} msgs`, m.end),
    `  growth over ${fmt(m.total)} msgs: rss ${fmt(rss, 1)} MiB (${fmt((m.end.rss - m.warm.rss) / MB, 1)} after warm-up), of which V8's young generation ${fmt(young, 1)} MiB, the rest ${fmt(rss - young, 1)} MiB; heap used ${fmt((m.end.heapUsed - m.before.heapUsed) / MB, 1)} MiB (${fmt((m.end.heapUsed - m.warm.heapUsed) / MB, 1)} after warm-up)`,
  ];
}

function memoryLines(extra: Extra, memory: MemoryRun): string[] {
  return [
    ...memoryBlock(`memory of the Node-RED process (child, --expose-gc, after a full GC), consume → ack at prefetch ${PREFETCH}, 1 KB:`, memory),
    ...(extra.rawMemory ? memoryBlock(`the same for raw amqplib doing the same work (the msg built, acked one turn later as a flow does, acks batched as the package batches them), in a process of its own:`, extra.rawMemory) : []),
    ...(extra.nodeRedMemory ? memoryBlock(`Node-RED alone: the same Node-RED runtime, raw amqplib doing the same work, its msg through one Node-RED hop (bench-source → bench-sink, acked there, batched), no package node in the flow:`, extra.nodeRedMemory) : []),
  ];
}

function parkingGroupLines(g: NonNullable<Extra['parkingGroup']>): string[] {
  return [
    '',
    `parking groups: ${fmt(g.count)} parked 1 KB messages (5 reasons with variable parts) grouped by a park-replay node in a Node-RED process of its own (target for 100 000: ≤ 10 s, ≤ 100 MiB):`,
    `  ${fmt(g.seconds, 2)} s (${fmt(g.count / g.seconds)} msg/s), ${g.groups} groups; Node-RED process rss ${fmt(g.rssBefore / MB, 1)} MiB idle, peak ${fmt(g.rssPeak / MB, 1)} MiB while grouping (+${fmt((g.rssPeak - g.rssBefore) / MB, 1)} MiB)`,
  ];
}

function historyLines(h: NonNullable<Extra['history']>): string[] {
  const young = (h.youngAfter - h.youngBefore) / MB;
  return [
    '',
    `history: ${fmt(h.consumers)} consumers' full ${fmt(h.minutes)}-minute history (6 series a minute: acked and depth 16-bit, 10 busy consumers' acked 32-bit, the rest 8-bit), in a process of its own (target: ≤ 10 MiB):`,
    `  rss +${fmt((h.rssAfter - h.rssBefore) / MB, 2)} MiB (${fmt(h.rssBefore / MB, 1)} → ${fmt(h.rssAfter / MB, 1)} MiB after a full GC), of which V8's young generation ${fmt(young, 2)} MiB; heap used +${fmt((h.heapAfter - h.heapBefore) / MB, 2)} MiB, the rings' typed arrays ${fmt(h.ringBytes / MB, 2)} MiB; filled in ${fmt(h.fillSeconds, 2)} s`,
  ];
}

/** Writes the whole report to stdout (what did not run is left out). */
export function printReport(env: Environment, results: Results): void {
  const { rows, analysis, failures, extra } = results;
  const out: string[] = [...header(env), ...pairsTable(rows)];
  if (extra.peers) out.push(...peersTable(env, extra.peers));
  if (extra.nativeRetry) out.push(...nativeRetryLines(extra.nativeRetry));
  if (extra.lag) out.push(...lagLines(extra.lag));
  if (analysis.length > 0) out.push(...analysisLines(analysis));
  if (extra.memory) out.push(...memoryLines(extra, extra.memory));
  if (extra.parkingGroup) out.push(...parkingGroupLines(extra.parkingGroup));
  if (extra.history) out.push(...historyLines(extra.history));
  out.push(...degradeTable(results.degrade));
  out.push(...scaleTable(results.scale));
  out.push(...partitionsTable(extra.partitions));
  out.push(...batchTable(extra.batch));
  if (failures.length > 0) {
    out.push('');
    out.push('FAILED sections:');
    for (const f of failures) out.push(`  ${f}`);
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}
