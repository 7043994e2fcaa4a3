/**
 * Keeps a warning written per message from flooding the log and the editor's debug sidebar (Node-RED
 * shows every `node.warn` there): in each window the first `burst` lines are written as they come,
 * the rest are counted and summed up in one line when the window ends (or at `flush()`). Nothing is
 * dropped silently: every line is either written or counted in a summary.
 */
export class LogLimiter {
  private written = 0;
  private held = 0;
  private lastHeld = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (text: string) => void,
    /** The summary line of `count` held lines, `last` being the last of them. */
    private readonly summary: (count: number, last: string, windowMs: number) => string,
    private readonly burst = 10,
    private readonly windowMs = 10_000,
  ) {}

  say(text: string): void {
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.windowMs);
      this.timer.unref?.();
    }
    if (this.written < this.burst) {
      this.written += 1;
      this.write(text);
      return;
    }
    this.held += 1;
    this.lastHeld = text;
  }

  /** Ends the window: writes the summary of what was held (if anything), and starts counting anew. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held > 0) this.write(this.summary(this.held, this.lastHeld, this.windowMs));
    this.written = 0;
    this.held = 0;
    this.lastHeld = '';
  }
}
