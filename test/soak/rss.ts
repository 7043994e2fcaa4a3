/**
 * The RSS of the soak's Node-RED processes, sampled every 10 s from /proc; what each retains after a
 * full collection, read from the marked lines of memory-probe.cjs; the growth of each process slot after
 * the warm-up (a restarted process is a new incarnation, measured from its own warm-up).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface RssSample {
  slot: number;
  pid: number;
  /** Date.now() of the incarnation's first sample. */
  born: number;
  at: number;
  kib: number;
}

/** VmRSS of a process (KiB); undefined once it is gone. */
export function rssKiB(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The line memory-probe.cjs writes after each full collection. */
export const MEMORY_MARK = 'SOAK_MEMORY ';
/** The argument list that loads memory-probe.cjs into a Node-RED process. */
export const memoryProbeArgs = (): string[] => ['--expose-gc', '--require', path.join(__dirname, 'memory-probe.cjs')];

/**
 * The probe's samples in one process slot's output (every incarnation's): `kib` is what the process
 * retained after a full collection (live heap + memory outside it), `rssKib` its RSS then.
 */
export function retainedSamples(output: string, slot: number): Array<RssSample & { rssKib: number }> {
  const born = new Map<number, number>();
  return output.split('\n').flatMap((line) => {
    const at = line.indexOf(MEMORY_MARK);
    if (at < 0) return [];
    try {
      const m = JSON.parse(line.slice(at + MEMORY_MARK.length)) as { at: number; pid: number; rss: number; heapUsed: number; external: number };
      if (!born.has(m.pid)) born.set(m.pid, m.at);
      return [{ slot, pid: m.pid, born: born.get(m.pid)!, at: m.at, kib: (m.heapUsed + m.external) / 1024, rssKib: m.rss / 1024 }];
    } catch {
      return [];
    }
  });
}

/** The windows at the start and the end of an incarnation's measured span whose lows are compared (2 minutes). */
export const RSS_WINDOW_MS = 120_000;

/**
 * Per slot, the largest growth (MiB) of one incarnation after `warmupMs`: the low of its last `windowMs`
 * of samples minus the low of its first `windowMs` after the warm-up. Lows, not single samples: the RSS
 * of a Node-RED process under this load saws up and down by ±60 MiB as its heap grows and is collected
 * (a 15-minute run sampled 160–285 MiB within one incarnation), so one sample against another measures
 * the saw; a leak raises the floor. Undefined for a slot none of whose incarnations lived past its
 * warm-up and sampled twice after it.
 */
export function rssGrowth(samples: readonly RssSample[], slots: number, warmupMs: number, windowMs = RSS_WINDOW_MS): Array<number | undefined> {
  return Array.from({ length: slots }, (_, slot) => {
    const byPid = new Map<number, RssSample[]>();
    for (const s of samples) if (s.slot === slot && s.at - s.born >= warmupMs) byPid.set(s.pid, [...(byPid.get(s.pid) ?? []), s]);
    const low = (list: readonly RssSample[]): number => Math.min(...list.map((x) => x.kib));
    const growths = [...byPid.values()]
      .filter((list) => list.length >= 2)
      .map((list) => {
        const first = list[0]!.at;
        const last = list[list.length - 1]!.at;
        return (low(list.filter((x) => x.at > last - windowMs)) - low(list.filter((x) => x.at < first + windowMs))) / 1024;
      });
    return growths.length === 0 ? undefined : Math.max(...growths);
  });
}

const mibOf = (kib: number): string => (kib / 1024).toFixed(1);

/** Samples as CSV: seconds from `t0`, slot, pid, then the columns `cells` gives. */
const samplesCsv = <S extends RssSample>(header: string, samples: readonly S[], t0: number, cells: (x: S) => string[]): string =>
  [header, ...samples.map((x) => [((x.at - t0) / 1000).toFixed(0), String(x.slot), String(x.pid), ...cells(x)].join(','))].join('\n') + '\n';

/** The probe's samples as CSV: seconds from `t0`, slot, pid, retained and RSS in MiB. */
export const retainedCsv = (samples: ReadonlyArray<RssSample & { rssKib: number }>, t0: number): string =>
  samplesCsv('s,slot,pid,retained_mib,rss_mib', samples, t0, (x) => [mibOf(x.kib), mibOf(x.rssKib)]);

/** The samples as CSV: seconds from `t0`, slot (0, 1), pid, RSS in MiB. */
export const rssCsv = (samples: readonly RssSample[], t0: number): string => samplesCsv('s,slot,pid,mib', samples, t0, (x) => [mibOf(x.kib)]);

export class RssMonitor {
  readonly samples: RssSample[] = [];
  private readonly born = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  /** Samples every `everyMs` the pids `pids()` gives (one per slot, undefined while a slot has none). */
  start(pids: () => Array<number | undefined>, everyMs = 10_000): void {
    const take = (): void => {
      const now = Date.now();
      pids().forEach((pid, slot) => {
        if (pid === undefined) return;
        const kib = rssKiB(pid);
        if (kib === undefined) return;
        if (!this.born.has(pid)) this.born.set(pid, now);
        this.samples.push({ slot, pid, born: this.born.get(pid)!, at: now, kib });
      });
    };
    take();
    this.timer = setInterval(take, everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
