/**
 * The relay's window of batches in flight: at most `limit` batches between their claim and their
 * commit, and each one's turn to mark its rows comes only when every batch opened before it has
 * closed (committed or rolled back), so rows are marked sent in the order they were claimed.
 * No I/O and no timers: promises only.
 */

/** One batch in the window. */
export interface WindowSlot {
  /** Resolves once every batch opened before this one has closed. */
  turn(): Promise<void>;
  /** The batch is done (committed or rolled back); idempotent. */
  close(): void;
}

export class BatchWindow {
  private open = 0;
  /** Resolves once every batch opened so far has closed, in order. */
  private tail: Promise<void> = Promise.resolve();
  private waiters: Array<() => void> = [];
  private idling: Promise<void> | undefined;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a window of batches in flight must be a whole number ≥ 1, not ${limit}`);
  }

  /** Batches opened and not closed yet. */
  get inFlight(): number {
    return this.open;
  }

  /** Resolves when fewer than `limit` batches are in flight. */
  room(): Promise<void> {
    return this.waitUntil(() => this.open < this.limit);
  }

  /** Resolves when no batch is in flight (one promise for every caller until then). */
  idle(): Promise<void> {
    if (this.open === 0) return Promise.resolve();
    this.idling ??= this.waitUntil(() => this.open === 0).then(() => {
      this.idling = undefined;
    });
    return this.idling;
  }

  /** Opens a batch (whether there is room is the caller's to ask first). */
  slot(): WindowSlot {
    this.open += 1;
    const prior = this.tail;
    let closed = false;
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.tail = prior.then(() => done);
    return {
      turn: () => prior,
      close: () => {
        if (closed) return;
        closed = true;
        this.open -= 1;
        release();
        this.notify();
      },
    };
  }

  private waitUntil(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (ready()) resolve();
        else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const check of waiting) check();
  }
}
