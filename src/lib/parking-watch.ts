/** Monitoring: how many messages wait in the parking queue for a human. A passive check, never a declare. */
import type { BrokerConnection } from './broker-connection';

export class ParkingWatch {
  /** Messages in the parking queue at the last look (from all consumers and the broker); undefined before. */
  depth: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param active whether to look now (the consumer is consuming)
   * @param changed called when the depth changed
   */
  constructor(
    private readonly connection: BrokerConnection,
    private readonly queue: string,
    private readonly active: () => boolean,
    private readonly changed: () => void,
  ) {}

  start(everyMs: number): void {
    if (everyMs <= 0) return;
    this.timer = setInterval(() => void this.look(), everyMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async look(): Promise<void> {
    if (!this.active() || !this.connection.connection) return;
    try {
      const { messageCount } = await this.connection.withThrowawayChannel((ch) => ch.checkQueue(this.queue));
      if (messageCount !== this.depth) {
        this.depth = messageCount;
        this.changed();
      }
    } catch {
      // Connection or queue gone: the consumer's own checks report that.
    }
  }
}
