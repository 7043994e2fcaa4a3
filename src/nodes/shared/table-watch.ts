/**
 * An outbox node's table until it is usable, as a consumer re-checks its topology: prepared at once,
 * then again every `everyMs` while it is not (a table fixed by hand, a database that comes back),
 * until it works or the node closes. Each node owns its watch.
 */
import { prepareFailureKind, type OutboxTarget } from './outbox-node';

/** Why the table is not usable now: its text, and whether the table or the database is the cause. */
export interface TableProblem {
  text: string;
  kind: 'table' | 'database';
}

export interface TableWatchHandlers {
  /** A table problem, once per distinct text (a database problem is the retry-postgres node's to log). */
  error(text: string): void;
  /** The table is usable after a problem. */
  log(text: string): void;
  /** The first time the table is usable. */
  usable(): void;
  /** The problem changed (appeared, changed, went): the status may change. */
  changed(): void;
}

export class TableWatch {
  /** Why the table is not usable; undefined when it is, or before the first try ends. */
  problem: TableProblem | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private usableOnce = false;
  private logged: string | undefined;

  constructor(
    private readonly target: Pick<OutboxTarget, 'prepare' | 'table'>,
    private readonly everyMs: number,
    private readonly on: TableWatchHandlers,
  ) {}

  /** Tries now (and again every `everyMs` after a failure). */
  start(): void {
    this.check().catch(() => undefined);
  }

  /** Tries now: resolves when the table is usable, rejects with why not (and tries again later). */
  check(): Promise<void> {
    return this.target.prepare().then(
      () => {
        if (this.stopped) return;
        clearTimeout(this.timer);
        this.timer = undefined;
        const was = this.problem;
        this.problem = undefined;
        this.logged = undefined;
        if (was) this.on.log(`outbox table ${this.target.table.display} is usable now`);
        if (!this.usableOnce) {
          this.usableOnce = true;
          this.on.usable();
        } else if (was) this.on.changed();
      },
      (err: unknown) => {
        if (!this.stopped) {
          const text = err instanceof Error ? err.message : String(err);
          const kind = prepareFailureKind(err);
          const before = this.problem;
          this.problem = { text, kind };
          if (kind === 'table' && text !== this.logged) {
            this.logged = text;
            this.on.error(text);
          }
          if (before?.text !== text || before.kind !== kind) this.on.changed();
          this.again();
        }
        throw err;
      },
    );
  }

  /** Stops trying (the node closes). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private again(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, this.everyMs);
    this.timer.unref?.();
  }
}
