/**
 * The bench's degrade section (issue 26): what the rate limit and the kill switch do to a consumer.
 *
 * - rate limit: consumer (rateLimit 200/s) → retry-settle ack on a preloaded queue, prefetch 100: the
 *   rate at which messages reach the flow (each is acked as it arrives), timed as every consume run
 *   (the delivery after the first tenth → the N-th ack); within 2 % of 200/s is what the issue asks.
 * - rules and kill switch: the same consume + ack flow with five error rules on the retry config and
 *   the kill switch on (never tripped: every settle is an ack), against the flow without them, in
 *   ABBA order; the ratio of the medians (≥ 0.97: they cost nothing measurable).
 */
import type { Names } from '../../test/helpers/flows';
import { fullGc, median, round, type RunResult } from './common';
import * as S from './scenarios';

/** The limit the rate run sets, and how close to it the measured rate must come. */
export const RATE_LIMIT = 200;
const RATE_TOLERANCE = 0.02;

/**
 * Five rules of the kinds a user writes for an HTTP call (the dialog's starting set, shortened): in a
 * consume + ack flow none is evaluated (an ack has no error to classify); what they could cost is
 * their parsing at deploy and the settle path checking for them.
 */
export const FIVE_RULES = [
  { name: 'timeout or too many', match: 'status', value: '408,429', kind: 'transient' },
  { name: 'client error', match: 'status', value: '4xx', kind: 'permanent' },
  { name: 'server error', match: 'status', value: '5xx', kind: 'transient' },
  { name: 'refused', match: 'code', value: 'ECONNREFUSED', kind: 'transient' },
  { name: 'timed out', match: 'message', value: 'time(d)? ?out', kind: 'transient' },
] as const;

/** The kill switch on with the node's defaults (20 settles, 50 %, 60 s window). */
const KILL_SWITCH = { circuit: true };

export interface DegradeOptions {
  smoke: boolean;
  reps: number;
  ctx: S.Ctx;
  topo: Names;
  prefetch: number;
  /** Messages of the unrecorded warm-up run of each flow (JIT). */
  warmup: number;
  /** Fills the main queue with `count` 1 KB messages. */
  load: (count: number) => () => Promise<void>;
  log: (text: string) => void;
}

export interface DegradeResult {
  rate?: { count: number; runs: number[]; msgPerSec: number };
  rules?: { count: number; plain: number[]; rules: number[]; plainCpu: number; rulesCpu: number };
}

const line = (r: RunResult): string => `${Math.round(r.msgPerSec)} msg/s, ${r.cpuUsPerMsg.toFixed(1)} µs CPU/msg`;

export async function runDegrade(o: DegradeOptions, result: DegradeResult): Promise<void> {
  const { ctx, topo, prefetch } = o;
  // A rate-limited run lasts count / 200 s: 3 000 messages, 15 s (the first tenth its warm-up).
  const rateCount = o.smoke ? 200 : 3000;
  const rateRuns: RunResult[] = [];
  for (let rep = 0; rep < o.reps; rep += 1) {
    await o.load(rateCount)();
    fullGc();
    const r = await S.pkgConsume(ctx, { topo, count: rateCount, prefetch, consumer: { rateLimit: String(RATE_LIMIT) } });
    rateRuns.push(r);
    o.log(`   rate limit ${RATE_LIMIT}/s #${rep + 1}: ${r.msgPerSec.toFixed(1)} msg/s (${r.seconds.toFixed(2)} s)`);
  }
  result.rate = { count: rateCount, runs: rateRuns.map((r) => r.msgPerSec), msgPerSec: median(rateRuns.map((r) => r.msgPerSec)) };

  const count = o.smoke ? 500 : 30000;
  const withRules = { consumer: KILL_SWITCH, config: { errorRules: FIVE_RULES.map((rule) => ({ ...rule })) } };
  for (const extra of [{}, withRules]) {
    await o.load(o.warmup)();
    await S.pkgConsume(ctx, { topo, count: o.warmup, prefetch, ...extra });
  }
  const plain: RunResult[] = [];
  const rules: RunResult[] = [];
  const sides: Array<[label: string, extra: object, into: RunResult[]]> = [
    ['without rules', {}, plain],
    ['five rules + kill switch', withRules, rules],
  ];
  for (let rep = 0; rep < o.reps; rep += 1) {
    // ABBA: the side that runs second in a pair has a measurable edge or handicap on a busy machine.
    for (const [label, extra, into] of rep % 2 === 0 ? sides : [...sides].reverse()) {
      await o.load(count)();
      fullGc();
      into.push(await S.pkgConsume(ctx, { topo, count, prefetch, ...extra }));
      o.log(`   consume+ack, ${label} #${rep + 1}: ${line(into.at(-1)!)}`);
    }
  }
  result.rules = {
    count,
    plain: plain.map((r) => r.msgPerSec),
    rules: rules.map((r) => r.msgPerSec),
    plainCpu: median(plain.map((r) => r.cpuUsPerMsg)),
    rulesCpu: median(rules.map((r) => r.cpuUsPerMsg)),
  };
}

const rulesRatio = (r: DegradeResult): number | undefined => (r.rules ? median(r.rules.rules) / median(r.rules.plain) : undefined);
const withinTolerance = (measured: number): boolean => Math.abs(measured - RATE_LIMIT) <= RATE_LIMIT * RATE_TOLERANCE;

export function degradeTable(r: DegradeResult): string[] {
  const out: string[] = [];
  if (!r.rate && !r.rules) return out;
  const f = (x: number, digits = 0): string => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  out.push('');
  out.push('rate limit and kill switch (1 KB, prefetch 100, consumer → retry-settle ack in the Node-RED runtime):');
  if (r.rate) {
    const { msgPerSec, runs, count } = r.rate;
    const off = ((msgPerSec - RATE_LIMIT) / RATE_LIMIT) * 100;
    out.push(
      `  rate limit ${RATE_LIMIT}/s, ${f(count)} msgs: ${f(msgPerSec, 1)} msg/s to the flow (median; runs ${runs.map((x) => f(x, 1)).join(', ')}), ${off >= 0 ? '+' : ''}${f(off, 2)} %: ${withinTolerance(msgPerSec) ? 'within' : 'NOT within'} ${RATE_TOLERANCE * 100} %`,
    );
  }
  if (r.rules) {
    const { count, plain, rules, plainCpu, rulesCpu } = r.rules;
    out.push(
      `  five error rules + kill switch on (untripped) / without, ${f(count)} msgs: ${f(rulesRatio(r) ?? NaN, 3)} (${f(median(rules))} vs ${f(median(plain))} msg/s; ${f(rulesCpu, 1)} vs ${f(plainCpu, 1)} µs CPU/msg)`,
    );
  }
  return out;
}

export function degradeJson(r: DegradeResult): Record<string, number | null> {
  return {
    rateLimit200Measured: round(r.rate?.msgPerSec, 1),
    rateLimit200Within2Pct: r.rate ? (withinTolerance(r.rate.msgPerSec) ? 1 : 0) : null,
    consumeAckRulesRatio: round(rulesRatio(r), 3),
  };
}
