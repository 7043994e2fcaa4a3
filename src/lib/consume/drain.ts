import { messages } from '../observe';
import type { StopOptions } from './types';

/**
 * A stopping consumer's drain: after basic.cancel no new message arrives, and the ones the flow
 * already holds get a bounded time to be settled (ack / retry / park as usual) before the channel
 * closes. Without it a redeploy returns them to the queue while the flow is still working on them,
 * and they are processed twice.
 */
export class Drain {
  private wake: (() => void) | undefined;

  /** @param inFlight deliveries not settled yet, a settle waiting for its copy's confirm included */
  constructor(private readonly inFlight: () => number) {}

  /** Nothing in flight. */
  get idle(): boolean {
    return this.inFlight() === 0;
  }

  /** What is in flight changed: a waiting drain looks again. */
  changed(): void {
    if (this.wake && this.idle) this.wake();
  }

  /**
   * Waits for the cancel (no new deliveries), lets Node-RED finish stopping the deploy's nodes (it
   * stops them all in one turn), then for the flow to settle what it holds. Says what stays unsettled.
   */
  async stopping(cancel: Promise<unknown> | undefined, { drainMs = 0, settlePath }: StopOptions): Promise<string | undefined> {
    await cancel;
    await new Promise((resolve) => setImmediate(resolve));
    const gone = settlePath?.() === false;
    if (await this.until(gone ? 0 : drainMs)) return undefined;
    return `stopping with ${messages(this.inFlight())} unsettled${gone ? ' (the nodes that settle them are stopping too)' : ''}: the broker redelivers them`;
  }

  /** Resolves once idle (true), or after `ms` (false, something is still in flight). */
  until(ms: number): Promise<boolean> {
    if (this.idle || ms <= 0) return Promise.resolve(this.idle);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve(false);
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(true);
      };
    });
  }
}
