/** Capped exponential backoff. Pure: the random source is passed in so tests can pin it. */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Multiplier per attempt (2 doubles). */
  factor?: number;
  /** Fraction of the delay that is randomised, 0..1, so many clients do not reconnect in step. */
  jitter?: number;
}

/** Delay before reconnect attempt `attempt` (1-based). */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const factor = options.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
  const exponent = Math.max(0, attempt - 1);
  const base = Math.min(options.maxMs, options.initialMs * factor ** exponent);
  const spread = base * jitter;
  return Math.round(Math.min(options.maxMs, Math.max(0, base - spread + random() * 2 * spread)));
}
