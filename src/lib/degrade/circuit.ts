/**
 * The kill switch (a circuit breaker) of one consumer, as a pure state machine with an injected clock.
 * Settles are counted in a sliding window — a ring of buckets (a sixtieth of the window each), so
 * counting a settle is O(1) and allocates nothing. Once the window holds `activation` settles and the
 * share of failures in it reaches `tripRatio`, the circuit opens; after its restart delay (doubled on
 * each trip in a row, capped) the owner calls `probe()`, and `probes` successes in a row close it; a
 * failure while probing opens it again. The owner does the stopping, probing and full consuming.
 */
import { cappedDelay } from '../backoff';

export type CircuitState = 'closed' | 'open' | 'probing';

export interface CircuitSettings {
  /** Settles in the window before the circuit can trip (≥ 1). */
  activation: number;
  /** Share of failures in the window that trips it (0 < ratio ≤ 1). */
  tripRatio: number;
  windowMs: number;
  /** The first restart delay; doubled on each trip in a row, capped by `restartMaxMs`. */
  restartMs: number;
  restartMaxMs: number;
  /** Successes in a row, while probing, that close the circuit (≥ 1). */
  probes: number;
}

/** A change of state, as the events output sends it: plain data. */
export interface CircuitChange {
  state: CircuitState;
  previous: CircuitState;
  reason: string;
  /** Failures and settles in the window when it tripped (0 when the window does not apply). */
  failures: number;
  settles: number;
  /** Open: seconds until it probes. */
  restartInS?: number;
}

/** The window's buckets: its precision is a sixtieth of it. */
export const WINDOW_BUCKETS = 60;

export class Circuit {
  private current: CircuitState = 'closed';
  private readonly failuresIn = new Float64Array(WINDOW_BUCKETS);
  private readonly settlesIn = new Float64Array(WINDOW_BUCKETS);
  private readonly bucketMs: number;
  /** The absolute bucket number (time / bucketMs) the ring was last advanced to. */
  private slot = -Infinity;
  private failures = 0;
  private settles = 0;
  private tripsInRow = 0;
  private probeAt = 0;
  private succeeded = 0;

  constructor(
    readonly settings: CircuitSettings,
    private readonly now: () => number,
  ) {
    this.bucketMs = settings.windowMs / WINDOW_BUCKETS;
  }

  get state(): CircuitState {
    return this.current;
  }

  /** Open: milliseconds until it probes (0 when due or not open). */
  get probeInMs(): number {
    return this.current === 'open' ? Math.max(0, this.probeAt - this.now()) : 0;
  }

  /** Probing: successes in a row so far. */
  get probed(): number {
    return this.succeeded;
  }

  /** Failures and settles in the window now. */
  get window(): { failures: number; settles: number } {
    this.advance(this.now());
    return { failures: this.failures, settles: this.settles };
  }

  /**
   * Counts one settle: a failure of the downstream (`true`) or a success. Says what changed, if
   * anything. While open nothing counts: the settles of messages already in the flow say nothing new.
   */
  record(failed: boolean): CircuitChange | undefined {
    if (this.current === 'open') return undefined;
    if (this.current === 'probing') return failed ? this.trip('probe failed', 0, 0) : this.probeSucceeded();
    const now = this.now();
    this.advance(now);
    const i = this.index(this.slot);
    this.settlesIn[i] = (this.settlesIn[i] ?? 0) + 1;
    this.settles += 1;
    if (failed) {
      this.failuresIn[i] = (this.failuresIn[i] ?? 0) + 1;
      this.failures += 1;
    }
    const { activation, tripRatio, windowMs } = this.settings;
    if (this.settles < activation || this.failures < tripRatio * this.settles) return undefined;
    const percent = Math.round((this.failures * 100) / this.settles);
    return this.trip(`${this.failures} of ${this.settles} settles failed (${percent} %) in the last ${windowMs / 1000} s`, this.failures, this.settles);
  }

  /** The restart delay passed: takes messages one at a time. */
  probe(): CircuitChange | undefined {
    if (this.current !== 'open') return undefined;
    this.succeeded = 0;
    return this.change('probing', 'restart timeout passed', 0, 0);
  }

  /** Closed by hand (a `resume`): the window and the trips in a row start anew. */
  reset(reason = 'resumed by hand'): CircuitChange | undefined {
    if (this.current === 'closed') return undefined;
    this.tripsInRow = 0;
    return this.close(reason);
  }

  /** The restart delay after `trips` trips in a row: the reconnect's backoff without jitter, doubling. */
  static restartDelay(settings: CircuitSettings, trips: number): number {
    return cappedDelay(trips, { initialMs: settings.restartMs, maxMs: settings.restartMaxMs, factor: 2 });
  }

  private probeSucceeded(): CircuitChange | undefined {
    this.succeeded += 1;
    if (this.succeeded < this.settings.probes) return undefined;
    this.tripsInRow = 0;
    return this.close(`${this.succeeded} probes succeeded`);
  }

  private close(reason: string): CircuitChange {
    this.clear();
    this.succeeded = 0;
    return this.change('closed', reason, 0, 0);
  }

  private trip(reason: string, failures: number, settles: number): CircuitChange {
    this.tripsInRow += 1;
    const delay = Circuit.restartDelay(this.settings, this.tripsInRow);
    this.probeAt = this.now() + delay;
    this.clear();
    this.succeeded = 0;
    const change = this.change('open', reason, failures, settles);
    change.restartInS = delay / 1000;
    return change;
  }

  private change(state: CircuitState, reason: string, failures: number, settles: number): CircuitChange {
    const previous = this.current;
    this.current = state;
    return { state, previous, reason, failures, settles };
  }

  private index(slot: number): number {
    return ((slot % WINDOW_BUCKETS) + WINDOW_BUCKETS) % WINDOW_BUCKETS;
  }

  /** Moves the ring to the bucket of `now`, emptying the buckets that fell out of the window. */
  private advance(now: number): void {
    const slot = Math.floor(now / this.bucketMs);
    if (slot <= this.slot) return;
    if (slot - this.slot >= WINDOW_BUCKETS) {
      this.clear();
    } else {
      for (let passed = this.slot + 1; passed <= slot; passed += 1) {
        const i = this.index(passed);
        this.failures -= this.failuresIn[i] ?? 0;
        this.settles -= this.settlesIn[i] ?? 0;
        this.failuresIn[i] = 0;
        this.settlesIn[i] = 0;
      }
    }
    this.slot = slot;
  }

  private clear(): void {
    this.failuresIn.fill(0);
    this.settlesIn.fill(0);
    this.failures = 0;
    this.settles = 0;
  }
}
