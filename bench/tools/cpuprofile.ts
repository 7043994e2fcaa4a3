/**
 * Summarizes a V8 .cpuprofile (from `node --cpu-prof` or the inspector): self time per function and
 * per origin (this package's dist/, amqplib, Node-RED, node internals, GC, ...), and inclusive time
 * of the package's functions.
 */
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}
interface FunctionTime {
  fn: string;
  url: string;
  line: number;
  us: number;
}
export interface Summary {
  totalMs: number;
  busyMs: number;
  origins: Array<{ origin: string; ms: number; pct: number }>;
  topSelf: Array<{ fn: string; where: string; origin: string; ms: number; pct: number }>;
  packageInclusive: Array<{ fn: string; where: string; ms: number; pct: number }>;
}

export function origin(url: string, functionName: string): string {
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(program)' || functionName === '(idle)' || functionName === '(root)') return functionName;
    return 'V8 builtins / native';
  }
  if (url.startsWith('node:')) return 'node internals';
  if (/\/dist\/(lib|nodes)\//.test(url) && !url.includes('node_modules')) return 'package (dist/)';
  if (url.includes('/bench/')) return 'bench harness';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url.replace(/.*node_modules\/(?=.*node_modules\/)/, ''));
  if (m?.[1]) {
    const name = m[1];
    if (name.startsWith('@node-red/') || name === 'node-red') return `Node-RED (${name})`;
    return name;
  }
  return 'other';
}

function shortUrl(url: string): string {
  if (!url) return '';
  const i = url.lastIndexOf('node_modules/');
  if (i >= 0) return url.slice(i + 'node_modules/'.length);
  const d = url.indexOf('/dist/');
  if (d >= 0) return url.slice(d + 1);
  return path.basename(url);
}

export function summarize(profile: CpuProfile, { top = 25 } = {}): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>(); // node id → µs
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i += 1) {
    // timeDeltas[i] is the time before sample i; attribute the following interval to sample i.
    const dt = timeDeltas[i + 1] ?? 0;
    const id = samples[i]!;
    self.set(id, (self.get(id) ?? 0) + dt);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...byId.values()].filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (self.get(n.id) ?? 0), 0);
  const busy = total - idle;

  const key = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'}\u0000${n.callFrame.url}\u0000${n.callFrame.lineNumber}`;
  const entryOf = (n: ProfileNode): FunctionTime => ({ fn: n.callFrame.functionName || '(anonymous)', url: n.callFrame.url, line: n.callFrame.lineNumber + 1, us: 0 });
  const fnSelf = new Map<string, FunctionTime>();
  const originSelf = new Map<string, number>();
  for (const n of byId.values()) {
    const t = self.get(n.id) ?? 0;
    if (t === 0) continue;
    const k = key(n);
    const entry = fnSelf.get(k) ?? entryOf(n);
    entry.us += t;
    fnSelf.set(k, entry);
    const o = origin(n.callFrame.url, n.callFrame.functionName);
    originSelf.set(o, (originSelf.get(o) ?? 0) + t);
  }

  // Inclusive time of package functions (each stack counted once per function, recursion-safe).
  const parent = new Map<number, number>();
  for (const n of byId.values()) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, FunctionTime>();
  for (const [id, t] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (!n || origin(n.callFrame.url, n.callFrame.functionName) !== 'package (dist/)') continue;
      const k = key(n);
      if (seen.has(k)) continue;
      seen.add(k);
      const entry = incl.get(k) ?? entryOf(n);
      entry.us += t;
      incl.set(k, entry);
    }
  }

  const pct = (us: number): number => (busy > 0 ? (100 * us) / busy : 0);
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    origins: [...originSelf.entries()]
      .filter(([o]) => o !== '(idle)')
      .map(([o, us]) => ({ origin: o, ms: us / 1000, pct: pct(us) }))
      .sort((a, b) => b.ms - a.ms),
    topSelf: [...fnSelf.values()]
      .filter((e) => e.fn !== '(idle)')
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({ fn: e.fn, where: `${shortUrl(e.url)}:${e.line}`, origin: origin(e.url, e.fn), ms: e.us / 1000, pct: pct(e.us) })),
    packageInclusive: [...incl.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({ fn: e.fn, where: `${shortUrl(e.url)}:${e.line}`, ms: e.us / 1000, pct: pct(e.us) })),
  };
}

export function formatSummary(s: Summary, perMsgDivisor?: number): string {
  const lines: string[] = [];
  const perMsg = (ms: number): string => (perMsgDivisor ? ` ${((ms * 1000) / perMsgDivisor).toFixed(2).padStart(7)} µs/msg` : '');
  lines.push(`busy CPU in profile: ${s.busyMs.toFixed(0)} ms (of ${s.totalMs.toFixed(0)} ms sampled, main thread)`);
  lines.push('self time by origin:');
  for (const o of s.origins) lines.push(`  ${o.pct.toFixed(1).padStart(5)} %  ${o.ms.toFixed(0).padStart(6)} ms${perMsg(o.ms)}  ${o.origin}`);
  lines.push('top functions by self time:');
  for (const f of s.topSelf) lines.push(`  ${f.pct.toFixed(1).padStart(5)} %  ${f.ms.toFixed(0).padStart(6)} ms${perMsg(f.ms)}  ${f.fn}  [${f.origin}] ${f.where}`);
  lines.push('package functions by inclusive time (self + what they call):');
  for (const f of s.packageInclusive) lines.push(`  ${f.pct.toFixed(1).padStart(5)} %  ${f.ms.toFixed(0).padStart(6)} ms${perMsg(f.ms)}  ${f.fn}  ${f.where}`);
  return lines.join('\n');
}

/** A V8 sampling heap profile (HeapProfiler.stopSampling), with the objects collected since kept in. */
export interface HeapProfile {
  head: HeapNode;
}
interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}
/** Bytes allocated by one function. */
interface HeapRow {
  fn: string;
  where: string;
  origin: string;
  bytes: number;
}
export interface HeapSummary {
  totalBytes: number;
  origins: Array<{ origin: string; bytes: number }>;
  topSelf: HeapRow[];
  /** Bytes by the innermost frame of the package (or of the bench harness) on the allocating stack. */
  byOwnFrame: HeapRow[];
}

/** Allocation by origin and by function, from a sampling heap profile. */
export function summarizeHeap(profile: HeapProfile, { top = 20 } = {}): HeapSummary {
  const byOrigin = new Map<string, number>();
  const bySelf = new Map<string, HeapRow>();
  const byOwn = new Map<string, HeapRow>();
  let totalBytes = 0;
  const add = (into: Map<string, HeapRow>, frame: CallFrame, bytes: number): void => {
    const where = `${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    const key = `${frame.functionName}@${where}`;
    const row = into.get(key) ?? { fn: frame.functionName || '(anonymous)', where, origin: origin(frame.url, frame.functionName), bytes: 0 };
    row.bytes += bytes;
    into.set(key, row);
  };
  const walk = (node: HeapNode, ownFrame: CallFrame | undefined): void => {
    const frame = node.callFrame;
    const o = origin(frame.url, frame.functionName);
    const innermostOwn = o === 'package (dist/)' || o === 'bench harness' ? frame : ownFrame;
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      byOrigin.set(o, (byOrigin.get(o) ?? 0) + node.selfSize);
      add(bySelf, frame, node.selfSize);
      if (innermostOwn) add(byOwn, innermostOwn, node.selfSize);
    }
    for (const child of node.children) walk(child, innermostOwn);
  };
  walk(profile.head, undefined);
  const sorted = <T extends { bytes: number }>(rows: Iterable<T>): T[] => [...rows].sort((a, b) => b.bytes - a.bytes);
  return {
    totalBytes,
    origins: sorted([...byOrigin].map(([o, bytes]) => ({ origin: o, bytes }))),
    topSelf: sorted(bySelf.values()).slice(0, top),
    byOwnFrame: sorted(byOwn.values()).slice(0, top),
  };
}

export function formatHeapSummary(s: HeapSummary, perMsgDivisor: number): string {
  const per = (bytes: number): string => `${(bytes / perMsgDivisor).toFixed(0).padStart(7)} B/msg`;
  const lines = [`allocated (sampled, collected objects included): ${(s.totalBytes / 1024 / 1024).toFixed(1)} MiB, ${per(s.totalBytes).trim()}`, 'by origin:'];
  for (const o of s.origins) lines.push(`  ${per(o.bytes)}  ${o.origin}`);
  lines.push('top functions by bytes allocated:');
  for (const f of s.topSelf) lines.push(`  ${per(f.bytes)}  ${f.fn}  [${f.origin}] ${f.where}`);
  lines.push("by the innermost package (or bench harness) function on the allocating stack:");
  for (const f of s.byOwnFrame) lines.push(`  ${per(f.bytes)}  ${f.fn}  [${f.origin}] ${f.where}`);
  return lines.join('\n');
}
