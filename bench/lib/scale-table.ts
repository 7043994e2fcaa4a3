/** The scale section's options and results (scale-scenarios.ts runs it), and how the report shows them. */
import { round, type NameBook } from './common';
import type * as S from './scenarios';

export const MB = 1024 * 1024;

/**
 * The busy-watch row: parking watch and stats events of every consumer every WATCH_S s (the defaults
 * are a 30 s parking watch and no stats output), so several looks fall in each idle window.
 */
export const WATCH_S = 10;

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

export interface ScaleOptions {
  smoke: boolean;
  reps: number;
  ctx: S.Ctx;
  names: NameBook;
  log: (text: string) => void;
}
