/**
 * A node's status, shown at once when something happens and at most every `intervalMs` while counts
 * change fast (at thousands of messages a second the editor needs a few updates a second, and each one
 * costs Node-RED a comms event); an unchanged status is not sent again.
 */
import type { NodeStatus } from './node-red';

export class StatusUpdates {
  private timer: NodeJS.Timeout | undefined;
  private last = '';

  /**
   * @param render the status now; undefined leaves the shown one as it is
   * @param show sets it (node.status, or every user's)
   */
  constructor(
    private readonly render: () => NodeStatus | undefined,
    private readonly show: (status: NodeStatus) => void,
    private readonly intervalMs = 500,
  ) {}

  /** Shows the status now (a state changed). */
  now(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }

  /** Shows the status within `intervalMs` (a count changed). */
  soon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.intervalMs);
  }

  /** Something else set the status meanwhile: the next one is shown even when it equals the last. */
  forget(): void {
    this.last = '';
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    const status = this.render();
    if (!status) return;
    const key = `${status.fill ?? ''}|${status.shape ?? ''}|${status.text ?? ''}`;
    if (key === this.last) return;
    this.last = key;
    this.show(status);
  }
}
