/**
 * A consumer session's setups, one at a time, and their slow re-checks: topology problems and lost
 * channels are tried again after a growing delay (2 s, doubled up to 60 s, ±10 %), so fixing the
 * broker heals the node, without a storm. One per session, which owns it and says whether a setup is
 * wanted at all (not stopped, no channel yet, connected).
 */
import { backoffDelay } from '../backoff';
import { realTimers, type Timers } from './timers';

const RECHECK_BACKOFF = { initialMs: 2000, maxMs: 60_000, factor: 2, jitter: 0.1 };

/** The delay before re-check `attempt` (1-based). */
export function recheckDelay(attempt: number, random: () => number = Math.random): number {
  return backoffDelay(attempt, RECHECK_BACKOFF, random);
}

export class Recheck {
  private attempt = 0;
  private timer: unknown;
  private running = false;

  /** `due` asks the owner for a setup when a re-check is due (the owner decides whether one is still wanted). */
  constructor(
    private readonly due: () => void,
    private readonly delay: (attempt: number) => number = recheckDelay,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Runs `setup` unless one is under way (a reconnect and a due re-check may both ask); a re-check still due is dropped. */
  async once(setup: () => Promise<void>): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.timers.clear(this.timer);
    try {
      await setup();
    } finally {
      this.running = false;
    }
  }

  /** The setup failed or the channel was lost: one re-check, after a delay longer than the last. */
  schedule(): void {
    this.attempt += 1;
    this.timers.clear(this.timer);
    this.timer = this.timers.set(this.due, this.delay(this.attempt));
  }

  /** Set up: the next failure waits the first delay again. */
  succeeded(): void {
    this.attempt = 0;
  }

  stop(): void {
    this.timers.clear(this.timer);
  }
}
