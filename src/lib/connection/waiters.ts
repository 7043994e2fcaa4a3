/**
 * Calls waiting for a broker connection, in one list: a burst of publishes during a reconnect adds
 * no listener per call (and no MaxListeners warning), and each call keeps its own timeout.
 */
export class Waiters<T> {
  private readonly waiting = new Set<{ resolve: (value: T) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();

  get size(): number {
    return this.waiting.size;
  }

  /** Waits for `wake()`; after `timeoutMs` rejects with `timedOut()`'s error. */
  wait(timeoutMs: number, timedOut: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiting.delete(waiter);
          reject(timedOut());
        }, timeoutMs),
      };
      this.waiting.add(waiter);
    });
  }

  /** Settles every waiting call: with the value, or with the error. */
  wake(outcome: { value: T } | { error: Error }): void {
    const waiters = [...this.waiting];
    this.waiting.clear();
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      if ('value' in outcome) waiter.resolve(outcome.value);
      else waiter.reject(outcome.error);
    }
  }
}
