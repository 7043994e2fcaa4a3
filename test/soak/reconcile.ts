/**
 * The soak's reconciliation (pure): from what the soak saw outside Node-RED — the ids confirmed, the
 * effects the downstream and the ordered stream's table recorded, the parked messages with their reason,
 * what was left in the queues, the RSS samples — the checks of issue 54, each passed or failed with the
 * ids that fail it.
 */
import { isPermanent } from './downstream';
import { resourceOf, type ScheduledFault } from './schedule';

export interface FaultRun {
  fault: ScheduledFault;
  /** Date.now() when it began and when what it hurt was healed (server answering, outage over). */
  start: number;
  end: number;
  error?: string;
}

export interface Observations {
  /** The work stream (direct publishes and outbox events): ids confirmed (committed for the outbox), the downstream's 200s, the parked copies. */
  confirmed: ReadonlySet<string>;
  effects: ReadonlyArray<{ id: string; at: number; via?: string }>;
  /** The parked copies: id, reason, and when the copy was made (its `park-time`). */
  parked: ReadonlyArray<{ id: string; reason: string; at?: number }>;
  /** Outbox events written and rolled back on purpose: never to be processed. */
  rolledBack: ReadonlySet<string>;
  /** The ordered stream: ids confirmed, effects in the order they committed. */
  orderedConfirmed: ReadonlySet<string>;
  orderedEffects: ReadonlyArray<{ id: string; key: string; n: number; at: number }>;
  /** Messages left in the main, retry and partition queues after the drain. */
  left: number;
  faults: readonly FaultRun[];
  /**
   * Per process slot: growth (MiB) after the warm-up of what the process retains after a full collection
   * (live heap + memory outside it), undefined when no incarnation lived long enough: the memory check.
   */
  retainedGrowthMiB: ReadonlyArray<number | undefined>;
  /** Per process slot: RSS growth (MiB) after the warm-up, reported (V8 keeps its heap's high-water mark committed). */
  rssGrowthMiB: ReadonlyArray<number | undefined>;
  /** The consumers not consuming after the drain (their latest status), per process. */
  statuses: readonly string[];
  /** How often the work consumers' kill switches tripped, over both processes (circuitTrips). */
  circuitTrips: number;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

const sample = (ids: Iterable<string>): string => [...ids].slice(0, 10).join(', ');

function counted(ids: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/**
 * The drain is over: every confirmed message effected or parked, nothing left in the queues, and every
 * consumer consuming again — a kill switch still open after the last outage (its restart delay doubled
 * by trips in a row) is not stuck yet: the drain waits for its probe rather than report it.
 */
export function drainDone(
  seen: Pick<Observations, 'confirmed' | 'effects' | 'parked' | 'orderedConfirmed' | 'orderedEffects' | 'left'>,
  notConsuming: readonly string[],
): boolean {
  const done = new Set([...seen.effects.map((e) => e.id), ...seen.parked.map((p) => p.id)]);
  const ordered = new Set(seen.orderedEffects.map((e) => e.id));
  const open = [...seen.confirmed].some((id) => !done.has(id)) || [...seen.orderedConfirmed].some((id) => !ordered.has(id));
  return !open && seen.left === 0 && notConsuming.length === 0;
}

/** Effects beyond the first of an id. */
export const duplicates = (ids: Iterable<string>): string[] => [...counted(ids)].filter(([, n]) => n > 1).map(([id]) => id);

/** Keys whose effects (each message's first) are not in increasing order of their number. */
export function outOfOrder(effects: ReadonlyArray<{ id: string; key: string; n: number }>): string[] {
  const seen = new Set<string>();
  const last = new Map<string, number>();
  const bad = new Set<string>();
  for (const e of effects) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    if ((last.get(e.key) ?? 0) > e.n) bad.add(e.key);
    last.set(e.key, e.n);
  }
  return [...bad];
}

/** Seconds from `end` to the first time at or after it; undefined when none. */
export function recoveryAfter(times: readonly number[], end: number): number | undefined {
  let first: number | undefined;
  for (const t of times) if (t >= end && (first === undefined || t < first)) first = t;
  return first === undefined ? undefined : (first - end) / 1000;
}

/** Times a kill switch tripped: a consumer's status turning to `circuit open` from another (one process's statuses, in order). */
export function circuitTrips(statuses: ReadonlyArray<{ id: string; text?: string }>): number {
  const open = new Map<string, boolean>();
  let trips = 0;
  for (const s of statuses) {
    const now = (s.text ?? '').startsWith('circuit open');
    if (now && !open.get(s.id)) trips += 1;
    open.set(s.id, now);
  }
  return trips;
}

/** The faults that can cut a connection: an ack sent after a park's publish was confirmed can be lost with it. */
const CUTS_CONNECTIONS: ReadonlySet<string> = new Set(['broker-restart', 'close-all', 'silent-connection', 'sigkill', 'redeploy']);
/** How long before a fault's start a park may have been made and its ack still lost (the publish confirm awaited first). */
export const PARK_ACK_WINDOW_MS = 10_000;

/**
 * Ids parked more than once with no fault to explain it. A park is a publish to the parking queue, then
 * the ack of the delivery: a connection cut between the two redelivers the message, which is parked
 * again (at least once, as the fault suite's duplicate deliveries). Explained when the first copy was
 * made while a fault that cuts connections was on, or up to PARK_ACK_WINDOW_MS before it began.
 */
export function unexplainedRepeatedParks(parked: ReadonlyArray<{ id: string; at?: number }>, faults: readonly FaultRun[]): string[] {
  const cuts = faults.filter((f) => CUTS_CONNECTIONS.has(f.fault.kind));
  return duplicates(parked.map((p) => p.id)).filter((id) => {
    const first = Math.min(...parked.filter((p) => p.id === id).map((p) => p.at ?? Number.NaN));
    return !cuts.some((f) => first >= f.start - PARK_ACK_WINDOW_MS && first <= f.end);
  });
}

/** A downstream outage at least this long trips the kill switch (its defaults: it trips within seconds of an outage). */
export const TRIPPING_OUTAGE_MS = 20_000;

export const RSS_LIMIT_MIB = 20;

const check = (name: string, bad: readonly string[], what: string): Check => ({ name, ok: bad.length === 0, detail: bad.length === 0 ? '0' : `${bad.length} ${what}: ${sample(bad)}` });

/** The work stream's checks: lost, duplicates, parking. */
function workChecks(o: Observations): Check[] {
  const effected = new Set(o.effects.map((e) => e.id));
  const parked = new Map(o.parked.map((p) => [p.id, p.reason]));
  const lost = [...o.confirmed].filter((id) => !effected.has(id) && !parked.has(id));
  const killed = o.faults.some((f) => f.fault.kind === 'sigkill');
  const dup = duplicates(o.effects.map((e) => e.id));
  const permanent = [...o.confirmed].filter(isPermanent);
  const outages = o.faults.filter((f) => f.fault.kind === 'downstream-503' && f.fault.durationMs >= TRIPPING_OUTAGE_MS);
  return [
    check('work: lost', lost, 'confirmed, neither effected nor parked'),
    // An HTTP effect cannot share the Redis key's transaction: a process killed between the two repeats it (at least once, docs/faults.md).
    killed && dup.length > 0
      ? { name: 'work: duplicate effects (deduplicated: Redis via Sentinel, PostgreSQL)', ok: true, detail: `${dup.length} after a SIGKILL (at least once): ${sample(dup)}` }
      : check('work: duplicate effects (deduplicated: Redis via Sentinel, PostgreSQL)', dup, 'ids effected twice'),
    check('work: parked twice without a connection cut to explain it', unexplainedRepeatedParks(o.parked, o.faults), 'ids parked twice'),
    check('work: permanent failures parked with their reason', permanent.filter((id) => !/400/.test(parked.get(id) ?? '')), 'not parked with the 400'),
    check('work: good messages parked', [...parked.keys()].filter((id) => !isPermanent(id)), 'good ids parked'),
    {
      name: `kill switch tripped by a downstream outage of ${TRIPPING_OUTAGE_MS / 1000} s or more`,
      ok: outages.length === 0 || o.circuitTrips > 0,
      detail: `${o.circuitTrips} trips; ${outages.length} such outages`,
    },
    check('outbox: rolled-back events processed', [...o.rolledBack].filter((id) => effected.has(id) || parked.has(id)), 'rolled back, yet seen'),
  ];
}

/** Every check, in the table's order. */
export function reconcile(o: Observations): Check[] {
  const orderedEffected = new Set(o.orderedEffects.map((e) => e.id));
  const resumed = o.faults.filter((f) => f.error === undefined && recoveryAfter(o.effects.map((e) => e.at), f.end) === undefined);
  return [
    ...workChecks(o),
    check('ordered: lost', [...o.orderedConfirmed].filter((id) => !orderedEffected.has(id)), 'confirmed, not effected'),
    check('ordered: duplicate effects (key in the effect\'s transaction)', duplicates(o.orderedEffects.map((e) => e.id)), 'ids effected twice'),
    check('ordered: per-key order', outOfOrder(o.orderedEffects), 'keys out of order'),
    { name: 'left in queues (unacked or stuck)', ok: o.left === 0, detail: String(o.left) },
    check('faults injected', o.faults.flatMap((f) => (f.error ? [`${f.fault.kind}: ${f.error}`] : [])), 'failed to inject'),
    check('processing resumed after every fault', resumed.map((f) => `${f.fault.kind} at +${(f.fault.at / 1000).toFixed(0)} s`), 'faults never followed by an effect'),
    check('consumers consuming after the drain', o.statuses, 'not consuming'),
    memoryCheck(o),
  ];
}

const MEMORY_CHECK = `memory retained after a full GC grows ≤ ${RSS_LIMIT_MIB} MiB per process after the warm-up`;
const mib = (g: number | undefined): string => (g === undefined ? 'n/a' : `${g >= 0 ? '+' : ''}${g.toFixed(1)}`);

/**
 * The memory check: what each process retains after a full collection, grown at most RSS_LIMIT_MIB from
 * its warm-up on (a leak raises it); the RSS growth is in the detail, not checked — V8 keeps the pages
 * of its heap's largest size committed, so the RSS after a burst (a drain after an outage) stays up
 * without anything retained (docs/faults.md#the-soak).
 */
function memoryCheck(o: Observations): Check {
  const rss = `RSS ${o.rssGrowthMiB.map(mib).join(' / ')} MiB (reported)`;
  if (o.retainedGrowthMiB.every((g) => g === undefined)) {
    const anyRss = o.rssGrowthMiB.some((g) => g !== undefined);
    return { name: MEMORY_CHECK, ok: !anyRss, detail: anyRss ? `no samples after a full GC (the probe did not report); ${rss}` : 'n/a: no process lived past the 5-minute warm-up' };
  }
  const grew = o.retainedGrowthMiB.flatMap((g, i) => (g !== undefined && g > RSS_LIMIT_MIB ? [`Node-RED ${i + 1}: +${g.toFixed(1)} MiB`] : []));
  return { name: MEMORY_CHECK, ok: grew.length === 0, detail: `retained ${o.retainedGrowthMiB.map(mib).join(' / ')} MiB; ${rss}${grew.length ? `; grew more: ${grew.join(', ')}` : ''}` };
}

/** The faults with their recovery, as a markdown table. */
export function faultTable(o: Observations, t0: number): string {
  const work = o.effects.map((e) => e.at);
  const ordered = o.orderedEffects.map((e) => e.at);
  const s = (x: number | undefined): string => (x === undefined ? 'never' : x.toFixed(1));
  const rows = o.faults.map((f) => {
    const hurt = `${f.fault.kind}${f.fault.process === undefined ? '' : ` (Node-RED ${f.fault.process + 1})`}`;
    return `| +${((f.start - t0) / 1000).toFixed(0)} | ${hurt} | ${resourceOf(f.fault)} | ${((f.end - f.start) / 1000).toFixed(1)} | ${s(recoveryAfter(work, f.end))} | ${s(recoveryAfter(ordered, f.end))} |${f.error ? ` ${f.error}` : ''}`;
  });
  return ['| start (s) | fault | hurts | lasted (s) | work resumed after (s) | ordered resumed after (s) |', '|---:|---|---|---:|---:|---:|', ...rows].join('\n');
}

export const checkTable = (checks: readonly Check[]): string =>
  ['| check | result | detail |', '|---|---|---|', ...checks.map((c) => `| ${c.name} | ${c.ok ? 'ok' : '**FAILED**'} | ${c.detail} |`)].join('\n');
