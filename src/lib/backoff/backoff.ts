/** Capped exponential backoff. Pure: the random source is passed in so tests can pin it. */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Multiplier per attempt (2 doubles). */
  factor?: number;
  /** Fraction of the delay that is randomised, 0..1, so many clients do not reconnect in step. */
  jitter?: number;
}

/** The delay of attempt `attempt` (1-based) without jitter: `initialMs` multiplied by `factor` on each attempt after the first, capped by `maxMs`. Not rounded. */
export function cappedDelay(attempt: number, options: Pick<BackoffOptions, 'initialMs' | 'maxMs' | 'factor'>): number {
  return Math.min(options.maxMs, options.initialMs * (options.factor ?? 2) ** Math.max(0, attempt - 1));
}

/** Delay before reconnect attempt `attempt` (1-based): `cappedDelay`, randomised by `jitter` either way, rounded to the millisecond. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
  const base = cappedDelay(attempt, options);
  const spread = base * jitter;
  return Math.round(Math.min(options.maxMs, Math.max(0, base - spread + random() * 2 * spread)));
}
