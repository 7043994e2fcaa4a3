/**
 * The soak's schedule (issue 54), drawn up front from a seed: a pure function of the seed and the run's
 * length, so the same seed always gives the same faults at the same offsets — a failing run is replayed
 * with its seed. Also the command line (`--minutes N --seed S`) and the command that replays a run.
 */

/** mulberry32: a small seeded PRNG; each call gives the next number in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** What a fault hurts: two faults at once never hurt the same thing. */
export type Resource = 'broker' | 'cluster' | 'node-red-1' | 'node-red-2' | 'redis' | 'postgres' | 'downstream';

export type FaultKind =
  | 'broker-restart'
  | 'close-all'
  | 'sigkill'
  | 'redeploy'
  | 'redis-restart'
  | 'redis-failover'
  | 'postgres-restart'
  | 'downstream-503'
  | 'silent-connection'
  | 'cluster-node';

interface KindSpec {
  /** How long the thing stays hurt (ms): a stopped server stays down, the downstream answers 503. */
  minMs: number;
  maxMs: number;
  /** Hits one of the two Node-RED processes. */
  perProcess?: boolean;
  resource?: Resource;
}

export const KINDS: Record<FaultKind, KindSpec> = {
  'broker-restart': { minMs: 2_000, maxMs: 10_000, resource: 'broker' },
  'close-all': { minMs: 0, maxMs: 0, resource: 'broker' },
  sigkill: { minMs: 2_000, maxMs: 10_000, perProcess: true },
  redeploy: { minMs: 0, maxMs: 0, perProcess: true },
  // The Redis master (behind Sentinel) killed and started again on its append-only file, before Sentinel would fail it over.
  'redis-restart': { minMs: 2_000, maxMs: 10_000, resource: 'redis' },
  // `SENTINEL FAILOVER`: the replica promoted, the old master made its replica (test/soak/sentinel.ts).
  'redis-failover': { minMs: 0, maxMs: 0, resource: 'redis' },
  'postgres-restart': { minMs: 2_000, maxMs: 10_000, resource: 'postgres' },
  'downstream-503': { minMs: 10_000, maxMs: 60_000, resource: 'downstream' },
  // Node-RED's connections to the broker held open but silent (test/soak/stall-proxy.ts).
  'silent-connection': { minMs: 5_000, maxMs: 40_000, resource: 'broker' },
  // Node 1 of the events stream's 3-node cluster (quorum queues), the one Node-RED connects to first, stopped and started.
  'cluster-node': { minMs: 5_000, maxMs: 20_000, resource: 'cluster' },
};

export const FAULT_KINDS = Object.keys(KINDS) as FaultKind[];

export interface ScheduledFault {
  /** From the start of the load (ms). */
  at: number;
  kind: FaultKind;
  /** How long it stays hurt (ms); 0 for a single act (close the connections, a redeploy). */
  durationMs: number;
  /** The Node-RED process it hits (0 or 1), for the per-process kinds. */
  process?: number;
}

export const resourceOf = (fault: ScheduledFault): Resource => KINDS[fault.kind].resource ?? (fault.process === 1 ? 'node-red-2' : 'node-red-1');

export interface ScheduleOptions {
  seed: number;
  minutes: number;
  /** Quiet time at the start (ms) before the first fault (default 20 s). */
  warmupMs?: number;
  /** Gap between fault starts (ms; default 20–60 s, as the issue asks). */
  gapMs?: [number, number];
  /** The chance that a fault has a second one overlapping it (default 0.25). */
  overlap?: number;
  /** The kinds to draw from (default all). */
  kinds?: readonly FaultKind[];
}

/** The run's faults, in order of their start; every fault is over before the load ends, and no two hurt one thing at once. */
export function drawSchedule(options: ScheduleOptions): ScheduledFault[] {
  const random = mulberry32(options.seed);
  const between = (lo: number, hi: number): number => Math.round(lo + random() * (hi - lo));
  const kinds = options.kinds ?? FAULT_KINDS;
  const [gapMin, gapMax] = options.gapMs ?? [20_000, 60_000];
  const end = options.minutes * 60_000;
  const out: ScheduledFault[] = [];
  const busy = (at: number): Set<Resource> => new Set(out.filter((f) => f.at + f.durationMs >= at).map(resourceOf));
  const draw = (at: number): ScheduledFault | undefined => {
    const taken = busy(at);
    const free = kinds.filter((kind) => (KINDS[kind].perProcess ? !(taken.has('node-red-1') && taken.has('node-red-2')) : !taken.has(KINDS[kind].resource!)));
    const kind = free[Math.floor(random() * free.length)];
    if (kind === undefined) return undefined;
    const spec = KINDS[kind];
    const fault: ScheduledFault = { at, kind, durationMs: between(spec.minMs, spec.maxMs) };
    if (spec.perProcess) fault.process = random() < 0.5 ? 0 : 1;
    if (taken.has(resourceOf(fault))) fault.process = fault.process === 0 ? 1 : 0;
    return fault.at + fault.durationMs < end ? fault : undefined;
  };
  for (let at = options.warmupMs ?? 20_000; at < end; at += between(gapMin, gapMax)) {
    const first = draw(at);
    if (!first) continue;
    out.push(first);
    if (random() >= (options.overlap ?? 0.25)) continue;
    const second = draw(at + between(0, Math.max(first.durationMs, 5_000)));
    if (second) out.push(second);
  }
  return out.sort((a, b) => a.at - b.at);
}

export interface SoakArgs {
  minutes: number;
  seed: number;
  /** Messages a second, over the three streams. */
  rate: number;
}

/** `--minutes N --seed S --rate R` (each optional); a seed drawn from the clock when none is given. */
export function parseArgs(argv: readonly string[], clock: () => number = Date.now): SoakArgs {
  const value = (name: string): number | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i < 0) return undefined;
    const n = Number(argv[i + 1]);
    if (!Number.isFinite(n) || n < 0 || (n === 0 && name !== 'seed')) throw new Error(`--${name} needs a positive number, got ${argv[i + 1] ?? 'nothing'}`);
    return n;
  };
  const unknown = argv.filter((a) => a.startsWith('--') && !['--minutes', '--seed', '--rate'].includes(a));
  if (unknown.length > 0) throw new Error(`unknown option(s) ${unknown.join(' ')}: npm run soak -- [--minutes N] [--seed S] [--rate R]`);
  return { minutes: value('minutes') ?? 60, seed: Math.floor(value('seed') ?? clock() % 2_147_483_647), rate: value('rate') ?? 150 };
}

/** The command that runs this soak again, the same faults at the same offsets. */
export const replayCommand = (args: SoakArgs): string => `npm run soak -- --minutes ${args.minutes} --seed ${args.seed} --rate ${args.rate}`;

/** One line per fault, for the start of the run. */
export function describeSchedule(schedule: readonly ScheduledFault[]): string[] {
  return schedule.map((f) => `  +${(f.at / 1000).toFixed(0).padStart(5)} s  ${f.kind}${f.process === undefined ? '' : ` (Node-RED ${f.process + 1})`}${f.durationMs > 0 ? ` for ${(f.durationMs / 1000).toFixed(0)} s` : ''}`);
}
