/**
 * The retry queues of a configuration and which one a retry goes to: one queue per delay (a
 * per-message TTL would block at the head of a shared queue), the backoff tiers in order (the last
 * repeating), a per-message delay rounded up to the next tier, and the jitter sub-tiers that spread
 * a tier's returns. Pure.
 */

/** Sub-tiers per tier when jitter is on: the tier's delay and 3 longer ones, evenly up to delay × (1 + jitter %). */
export const JITTER_STEPS = 4;

/** The part of a retry configuration (plan.ts) its retry queues depend on. */
export interface RetryQueuesConfig {
  retryQueue: string;
  retryDelaysMs: number[];
  retryJitterPercent?: number;
}

/** `250ms`, `10s`, `2m`, `1h`: how tier queue names show their delay. */
export function formatDelay(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 && ms > 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * A tier's delays with jitter: the delay itself, then longer ones up to delay × (1 + percent / 100),
 * whole ms, without repeats. Never shorter than the tier: jitter only spreads returns later.
 */
export function jitteredDelays(delayMs: number, percent: number | undefined): number[] {
  if (!percent || percent <= 0 || delayMs <= 0) return [delayMs];
  const out: number[] = [];
  for (let k = 0; k < JITTER_STEPS; k += 1) {
    const d = Math.round(delayMs * (1 + (percent / 100) * (k / (JITTER_STEPS - 1))));
    if (!out.includes(d)) out.push(d);
  }
  return out;
}

/**
 * The delays of the retry queues, in tier order: the tiers themselves (two equal tiers are a
 * configuration error, validation says so), or with jitter each tier's sub-tiers, a delay two tiers
 * share with one queue.
 */
export function retryQueueDelays(config: Pick<RetryQueuesConfig, 'retryDelaysMs' | 'retryJitterPercent'>): number[] {
  if (!((config.retryJitterPercent ?? 0) > 0)) return [...config.retryDelaysMs];
  const out: number[] = [];
  for (const delay of config.retryDelaysMs) for (const d of jitteredDelays(delay, config.retryJitterPercent)) if (!out.includes(d)) out.push(d);
  return out;
}

/** Whether each retry queue is named after its delay (tiers or jitter), or the retry queue is the only one. */
function named(config: Pick<RetryQueuesConfig, 'retryDelaysMs' | 'retryJitterPercent'>): boolean {
  return config.retryDelaysMs.length > 1 || (config.retryJitterPercent ?? 0) > 0;
}

/** The name of the retry queue of one delay: `<retry queue>.<delay>` (e.g. `orders.retry.10s`), or the retry queue itself with one delay. */
export function retryQueueOf(config: RetryQueuesConfig, delayMs: number): string {
  return named(config) ? `${config.retryQueue}.${formatDelay(delayMs)}` : config.retryQueue;
}

/** Retry queue names, one per distinct delay (see {@link retryQueueOf}). */
export function retryQueueNames(config: RetryQueuesConfig): string[] {
  if (!named(config)) return [config.retryQueue];
  return retryQueueDelays(config).map((ms) => retryQueueOf(config, ms));
}

/** The tier (0-based, of `tiers`) of the n-th failed attempt (1-based): tiers in order, the last one repeating. */
const tierOf = (tiers: number, failedAttempt: number): number => Math.min(Math.max(failedAttempt, 1), tiers) - 1;

/**
 * The tier a retry waits in: the attempt's own, or a later one when the flow asked for a longer
 * delay (`msg.retry.delay`): the first tier at least that long, else the longest.
 */
export function tierFor(config: Pick<RetryQueuesConfig, 'retryDelaysMs'>, failedAttempt: number, requestedMs = 0): number {
  const tiers = config.retryDelaysMs;
  let tier = tierOf(tiers.length, failedAttempt);
  if (requestedMs > (tiers[tier] ?? 0)) {
    let longest = tier;
    for (let i = 0; i < tiers.length; i += 1) if ((tiers[i] ?? 0) > (tiers[longest] ?? 0)) longest = i;
    // The shortest tier that is long enough (tiers need not be sorted).
    let best = -1;
    for (let i = 0; i < tiers.length; i += 1) if ((tiers[i] ?? 0) >= requestedMs && (best < 0 || (tiers[i] ?? 0) < (tiers[best] ?? 0))) best = i;
    tier = best >= 0 ? best : longest;
  }
  return tier;
}

/** The delay of the n-th failed attempt's tier (before jitter). */
export function retryDelayFor(config: Pick<RetryQueuesConfig, 'retryDelaysMs'>, failedAttempt: number, requestedMs = 0): number {
  return config.retryDelaysMs[tierFor(config, failedAttempt, requestedMs)] ?? 0;
}

/**
 * The retry queue (and its delay) for the n-th failed attempt: its tier (see {@link tierFor}), and
 * with jitter one of the tier's sub-tiers, chosen by `random` (0 ≤ r < 1).
 */
export function retryQueueChoice(config: RetryQueuesConfig, failedAttempt: number, requestedMs = 0, random: () => number = Math.random): { queue: string; delayMs: number } {
  const delays = jitteredDelays(retryDelayFor(config, failedAttempt, requestedMs), config.retryJitterPercent);
  const delayMs = delays.length > 1 ? (delays[Math.min(delays.length - 1, Math.floor(random() * delays.length))] ?? 0) : (delays[0] ?? 0);
  return { queue: retryQueueOf(config, delayMs), delayMs };
}

/** The retry queue for the n-th failed attempt, without jitter's choice (its tier's first queue). */
export function retryQueueFor(config: RetryQueuesConfig, failedAttempt: number): string {
  return retryQueueChoice(config, failedAttempt, 0, () => 0).queue;
}
