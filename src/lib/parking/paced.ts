/**
 * A paced replay: a few canary messages first, a wait, a look at the parking queue for any of them
 * parked again (then it stops and says so), then the rest at a rate in messages per second. It stops
 * between two messages when cancelled: the message being published is either replayed whole
 * (confirmed, then acked) or stays parked.
 */

export type PacedState = 'canary' | 'waiting' | 'checking' | 'running' | 'done' | 'stopped' | 'cancelled' | 'failed';

export interface PacedOptions {
  /** Messages per second, > 0. */
  rate: number;
  /** How many are replayed first, as canaries (0: no canary). */
  canary: number;
  /** How long to wait after the canaries before looking for any parked again (ms). */
  canaryWaitMs: number;
  /** At most this many in all. */
  max: number;
}

/** What a paced replay runs on: one replay pass (a scan of the parking queue), and the look for copies parked again. */
export interface PacedWork {
  replay(max: number, hooks: { before: () => Promise<boolean>; replayed: () => void }): Promise<{ replayed: number; remaining: number }>;
  parkedAgain(): Promise<number>;
}

export interface PacedStatus extends PacedOptions {
  state: PacedState;
  /** Replayed so far (canaries included). */
  replayed: number;
  /** Canaries replayed. */
  canaryReplayed: number;
  /** Copies of this run found parked again at the last look (null: not looked yet). */
  parkedAgain: number | null;
  /** Messages in the parking queue after the last pass. */
  remaining: number | null;
  /** Why it ended, in a person's words (stopped, failed, cancelled). */
  message: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** Whether a state is an end. */
const isFinal = (state: PacedState): boolean => state === 'done' || state === 'stopped' || state === 'cancelled' || state === 'failed';

const LIMITS = { maxRate: 1000, maxCanary: 1000, maxWaitMs: 24 * 3600_000 } as const;

function positive(value: unknown, name: string, fallback: number, max: number, integer: boolean): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) throw new Error(`${name} must be a ${integer ? 'whole ' : ''}number ≥ 0, got ${JSON.stringify(value)}`);
  if (n > max) throw new Error(`${name} must be at most ${max}, got ${n}`);
  return n;
}

/** Paced replay options from plain fields (`rate`, `canary`, `canaryWait` in seconds, `max`), checked. */
export function pacedOptionsFrom(source: Record<string, unknown>, defaults: { max: number }): PacedOptions {
  const rate = positive(source.rate, 'rate (messages per second)', 10, LIMITS.maxRate, false);
  if (rate <= 0) throw new Error('rate (messages per second) must be above 0');
  const canary = positive(source.canary, 'canary (messages replayed first)', 0, LIMITS.maxCanary, true);
  const canaryWaitMs = positive(source.canaryWait, 'canaryWait (seconds)', 30, LIMITS.maxWaitMs / 1000, false) * 1000;
  const max = positive(source.max, 'max', defaults.max, Number.MAX_SAFE_INTEGER, true) || defaults.max;
  return { rate, canary, canaryWaitMs, max };
}

export class PacedReplay {
  private readonly state: PacedStatus;
  private cancelled = false;
  /** Why it was cancelled, when not by a person (e.g. the connection closing on a redeploy). */
  private why: string | undefined;
  private wake: (() => void) | undefined;
  private lastPublish = 0;
  /** Resolves once the run has ended (whatever the end). */
  readonly finished: Promise<void>;

  constructor(
    private readonly work: PacedWork,
    options: PacedOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.state = { ...options, state: 'canary', replayed: 0, canaryReplayed: 0, parkedAgain: null, remaining: null, message: null, startedAt: new Date(now()).toISOString(), finishedAt: null };
    this.finished = this.run();
  }

  status(): PacedStatus {
    return { ...this.state };
  }

  get done(): boolean {
    return isFinal(this.state.state);
  }

  /** Stops between two messages (or ends a wait at once); resolves once stopped. `why`: said in its end, when not a person's cancel. */
  cancel(why?: string): Promise<void> {
    if (!this.cancelled) this.why = why;
    this.cancelled = true;
    this.wake?.();
    return this.finished;
  }

  private async run(): Promise<void> {
    try {
      const canary = Math.min(this.state.canary, this.state.max);
      if (canary > 0) {
        const first = await this.pass(canary, true);
        if (this.cancelled) return this.end('cancelled', `${this.why ?? 'cancelled'} after ${this.state.replayed} replayed`);
        if (first === 0) return this.end('done', 'nothing to replay');
        this.state.state = 'waiting';
        await this.sleep(this.state.canaryWaitMs);
        if (this.cancelled) return this.end('cancelled', `${this.why ?? 'cancelled'} while waiting for the canaries; ${this.state.replayed} replayed`);
        this.state.state = 'checking';
        const again = await this.work.parkedAgain();
        this.state.parkedAgain = again;
        if (again > 0) return this.end('stopped', `${again} of the ${this.state.canaryReplayed} canary messages were parked again: the rest were not replayed`);
      }
      this.state.state = 'running';
      await this.pass(this.state.max - this.state.replayed, false);
      if (this.cancelled) return this.end('cancelled', `${this.why ?? 'cancelled'} after ${this.state.replayed} replayed`);
      this.state.parkedAgain = await this.work.parkedAgain();
      return this.end('done', null);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      // Cancelled as the connection went (a redeploy closes both at once): still a cancel, said with what the close did.
      if (this.cancelled) return this.end('cancelled', `${this.why ?? 'cancelled'} after ${this.state.replayed} replayed (${text})`);
      return this.end('failed', text);
    }
  }

  private async pass(max: number, canary: boolean): Promise<number> {
    if (max <= 0) return 0;
    let count = 0;
    const result = await this.work.replay(max, {
      before: () => this.pace(),
      replayed: () => {
        count += 1;
        this.state.replayed += 1;
        if (canary) this.state.canaryReplayed += 1;
      },
    });
    this.state.remaining = result.remaining;
    return count;
  }

  /** Waits until the next message is due at the rate; false once cancelled. */
  private async pace(): Promise<boolean> {
    if (this.cancelled) return false;
    const due = this.lastPublish + 1000 / this.state.rate;
    const wait = due - this.now();
    if (this.lastPublish > 0 && wait > 0) await this.sleep(wait);
    this.lastPublish = this.now();
    return !this.cancelled;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const wake = (): void => done();
      this.wake = wake;
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    }).finally(() => {
      this.wake = undefined;
    });
  }

  private end(state: PacedState, message: string | null): void {
    this.state.state = state;
    this.state.message = message;
    this.state.finishedAt = new Date(this.now()).toISOString();
  }
}
