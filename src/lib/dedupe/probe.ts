/**
 * Probing a store that is down: asks it (`ping`) after a pause that doubles each time, up to a cap,
 * until it answers; then says so once (and the next outage starts with the shortest pause).
 */

export interface ProbeBackoff {
  /** First and longest pause; defaults 1 s and 30 s. */
  initialMs: number;
  maxMs: number;
}

export class StoreProbe {
  private timer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private stopped = false;

  constructor(
    private readonly ping: () => Promise<void>,
    private readonly onUp: () => void,
    private readonly backoff: ProbeBackoff = { initialMs: 1000, maxMs: 30_000 },
  ) {}

  /** Asks the store after the next pause, and on until it answers. */
  start(): void {
    if (this.stopped || this.timer !== undefined) return;
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ping().then(
        () => {
          if (this.stopped) return;
          this.attempt = 0;
          this.onUp();
        },
        () => this.start(),
      );
    }, delay);
    this.timer.unref?.();
  }

  /** No more probing. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
