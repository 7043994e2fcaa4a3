/**
 * What a consumer's settles came to: its counters, its metrics, the park warning (limited, so a
 * burst cannot flood the log) and the `settled` report for the events output (built only when
 * someone listens: the hot path stays cheap). Owned by its `Deliveries`.
 */
import type { ErrorKind } from '../classify';
import { LogLimiter, messages, type OutcomeRecorder } from '../observe';
import type { Decision, SettleOutcome, TrackedDelivery } from '../settle';
import type { Settled } from './types';

/** What the outcomes tell through their owner. */
export interface OutcomeHooks {
  warning(text: string): void;
  /** The counters changed. */
  changed(): void;
  /** Whether anyone wants the `settled` report. */
  reporting(): boolean;
  settled(settled: Settled): void;
}

export class SettleOutcomes {
  readonly counters = { delivered: 0, acked: 0, retried: 0, parked: 0, duplicates: 0 };
  private readonly parkLog: LogLimiter;
  /** Inside `together`: how deep, and whether a `changed` was held back meanwhile. */
  private quiet = 0;
  private missed = false;

  constructor(
    private readonly metrics: OutcomeRecorder | undefined,
    private readonly hooks: OutcomeHooks,
  ) {
    this.parkLog = new LogLimiter(
      (text) => hooks.warning(text),
      (count, last, ms) => `${messages(count, 'more')} parked in the last ${ms / 1000} s (the last: ${last})`,
    );
  }

  /** Counts a settle that is done, records its metrics and reports it. */
  finished(entry: TrackedDelivery, decision: Decision | { kind: 'duplicate' }, reason: string, kind?: ErrorKind): SettleOutcome {
    const outcome = this.counted(entry.id, decision, entry.retry.attempt);
    this.metrics?.record(outcome.done, Date.now() - entry.receivedAt, kind);
    if (this.hooks.reporting()) {
      const messageId = entry.message.properties.messageId as unknown;
      const settled: Settled = {
        outcome,
        reason: outcome.parkReason ?? reason,
        messageId: typeof messageId === 'string' ? messageId : null,
        durationMs: Date.now() - entry.receivedAt,
      };
      if (kind !== undefined) settled.kind = kind;
      this.hooks.settled(settled);
    }
    return outcome;
  }

  /**
   * Runs `settles` (a batch's items settled in one loop) with one `changed` at its end instead of one
   * per settle: each item is still counted, recorded and reported on its own.
   */
  together<T>(settles: () => T): T {
    this.quiet += 1;
    try {
      return settles();
    } finally {
      this.quiet -= 1;
      if (this.quiet === 0 && this.missed) {
        this.missed = false;
        this.hooks.changed();
      }
    }
  }

  /** Writes the warnings held back so far. */
  flush(): void {
    this.parkLog.flush();
  }

  private counted(id: string, decision: Decision | { kind: 'duplicate' }, attempt: number): SettleOutcome {
    let outcome: SettleOutcome;
    if (decision.kind === 'duplicate') {
      this.counters.duplicates += 1;
      outcome = { done: 'duplicate', attempt };
    } else if (decision.kind === 'ack') {
      this.counters.acked += 1;
      outcome = { done: 'acked', attempt };
    } else if (decision.kind === 'park') {
      this.counters.parked += 1;
      // A parked message waits for a human: say so in the log, whatever parked it.
      this.parkLog.say(`message ${id} parked in '${decision.queue}': ${decision.reason}`);
      outcome = { done: 'parked', attempt, parkReason: decision.reason, parkedTo: decision.queue };
    } else {
      this.counters.retried += 1;
      outcome = { done: 'retried', attempt };
    }
    if (this.quiet > 0) this.missed = true;
    else this.hooks.changed();
    return outcome;
  }
}
