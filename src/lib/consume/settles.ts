/**
 * A consumer's settles: a settle by delivery id goes through `decide()` and the settler; an ack of a
 * deduplicated delivery waits for its key to be recorded, a retry or park releases it. Outcomes are
 * counted and reported (through the consumer's delivery events). A failed copy (park, retry tier) is
 * handled here, in one place. The settle deadlines (a delivery nobody settled in time is retried) and
 * a duplicate acked on arrival settle here too. Owned by the consumer's `Deliveries`, which registers
 * the deliveries this settles (in their `DeliveryRegistry`); the end nodes reach it as
 * `session.settles` (the walk of one message: docs/architecture.md).
 */
import type { EventEmitter } from 'node:events';
import type { ErrorKind } from '../classify';
import type { FailureDetails, RetryInfo } from '../message';
import {
  decide,
  PAST_TENSE,
  SettleError,
  staleDelivery,
  type CopyDecision,
  type Decision,
  type SettleAction,
  type SettleLater,
  type SettleOutcome,
  type TrackedDelivery,
} from '../settle';
import { requeueAfterPause } from './copy-failure';
import { endSpans, failSpans, startSettle } from './delivery-spans';
import { notSettleable, type DeliveryRegistry } from './registry';
import { KeyedSettles } from './keyed-settles';
import { SettleDeadlines } from './settle-deadlines';
import { SettleOutcomes } from './settle-outcomes';
import type { DeliveriesOptions, DeliveryEvents } from './types';

/** Ordered mode's hold runs a delivery again after its pause: a new arrival (its retry info with the next attempt). */
export type RunAgain = (entry: TrackedDelivery, retry: RetryInfo) => void;

export class Settles {
  private copies = 0;
  /** Acks and lost-channel settles of deduplicated deliveries, waiting on the store. */
  private readonly keyed: KeyedSettles | undefined;
  /** Once stopping, a held message is not run again (it goes back to the queue with the channel). */
  private stopping = false;
  /** The counters, metrics, park warnings and `settled` reports of what the settles came to. */
  private readonly outcomes: SettleOutcomes;
  /** The settle timeout of live deliveries and of lost-channel deliveries' keys. */
  private readonly deadlines: SettleDeadlines;

  /**
   * @param events the consumer's delivery events (`changed`, `settled`, `warning`, `error`), which its session and node observe
   * @param again ordered mode's hold: runs a held delivery again (not once stopping)
   */
  constructor(
    private readonly registry: DeliveryRegistry<TrackedDelivery>,
    private readonly options: DeliveriesOptions,
    private readonly events: EventEmitter<DeliveryEvents>,
    private readonly again: RunAgain,
  ) {
    this.outcomes = new SettleOutcomes(options.metrics, {
      warning: (text) => events.emit('warning', text),
      changed: () => events.emit('changed'),
      reporting: () => events.listenerCount('settled') > 0,
      settled: (settled) => events.emit('settled', settled),
    });
    this.deadlines = new SettleDeadlines(registry, options.settleTimeoutMs, {
      // Nobody said what went wrong: a failure that may heal, as without error rules.
      retry: (id, reason) => this.settle(id, 'retry', reason, undefined, 'transient'),
      release: (key) => this.options.dedupe?.gate.release(key),
      warning: (text) => events.emit('warning', text),
      error: (text) => events.emit('error', text),
    });
    const gate = options.dedupe?.gate;
    this.keyed = gate && new KeyedSettles(gate, this.deadlines.orphans, {
      ack: (entry, action, reason, kind) => this.recordedAck(entry, action, reason, kind),
      duplicate: (entry) => this.finished(entry, { kind: 'duplicate' }, ''),
    });
  }

  /** Deliveries received, acked, retried, parked, and duplicates acked without entering the flow. */
  get counters(): SettleOutcomes['counters'] {
    return this.outcomes.counters;
  }

  /** Deliveries waiting to be settled. */
  get inFlight(): number {
    return this.registry.size;
  }

  /** Settles under way: copies (retry tier, parking queue) waiting for their confirm, acks waiting for their key to be recorded. */
  get copying(): number {
    return this.copies + (this.keyed?.completing ?? 0);
  }

  /** Whether this consumer gave out a delivery id (live, settled, or too old to remember). */
  issued(id: string): boolean {
    return this.registry.issued(id);
  }

  /** The settle deadline of a delivery handed to the flow now (Infinity without a settle timeout). */
  deadline(): number {
    return this.deadlines.started();
  }

  /** A duplicate of a processed key, found on arrival: acked without entering the flow. */
  duplicate(entry: TrackedDelivery): void {
    this.keyed?.duplicate(entry);
  }

  /**
   * Runs `settles` — many {@link settleNow} calls in one loop (a batch msg's items) — with one `changed`
   * event at its end instead of one per settle; each is still counted, recorded and reported on its own.
   */
  together<T>(settles: () => T): T {
    return this.outcomes.together(settles);
  }

  /** {@link settleNow} as a promise (the settle timeout, an invalid body): rejects with {@link SettleError} when it cannot be settled (any more). */
  settle(id: string, action: SettleAction, reason = '', failure?: FailureDetails, kind?: ErrorKind, delayMs?: number): Promise<SettleOutcome> {
    return new Promise((resolve, reject) => {
      const now = this.settleNow(id, action, reason, failure, kind, (result) => (result instanceof Error ? reject(result) : resolve(result)), delayMs);
      if (now !== undefined) resolve(now);
    }); // what settleNow throws rejects it
  }

  /**
   * The one way a delivery is settled (the settle nodes' hot path: no promise). An ack, a dead-letter
   * or a hold returns its outcome at once; a copy (retry tier, park), or the ack of a deduplicated
   * delivery waiting for its key to be recorded, returns undefined and `later` gets its outcome or
   * error once known (never before this returns). One that cannot settle throws its {@link SettleError}.
   * `kind`: what the error rules made of the failure (a retry-settle in retry mode, the settle timeout), see `decide`;
   * `delayMs`: the wait a retry asked for (`msg.retry.delay`, an HTTP `Retry-After`), see `decide`.
   */
  settleNow(id: string, action: SettleAction, reason: string, failure: FailureDetails | undefined, kind: ErrorKind | undefined, later: SettleLater, delayMs?: number): SettleOutcome | undefined {
    const { registry } = this;
    const entry = registry.take(id, PAST_TENSE[action]);
    if (!entry) {
      this.keyed?.orphan(id, action);
      throw notSettleable(registry.ending(id), id, action);
    }
    const decision = decide(this.options.policy, entry, action, reason, Date.now(), failure, kind, delayMs);
    if (entry.spans !== undefined && this.options.tracer !== undefined) startSettle(this.options.tracer, this.options.mainQueue, entry.spans, entry, decision);
    const key = entry.dedupeKey;
    // Released on a retry or a park, so the next delivery is processed again; an ordered hold keeps it.
    if (key !== undefined && decision.kind !== 'ack' && decision.kind !== 'hold') this.options.dedupe?.gate.release(key);
    switch (decision.kind) {
      case 'republish':
      case 'park':
        void this.settleByCopy(entry, decision, action, reason, kind).then(
          (outcome) => later(outcome, id),
          (err: unknown) => later(err instanceof Error ? err : new Error(String(err)), id),
        );
        return undefined;
      case 'hold':
        if (entry.acks.closed) throw this.unsettled(entry, staleDelivery(entry, action));
        this.options.hold?.hold(entry, decision.reason, (attempt) => {
          if (!this.stopping) this.again(entry, { ...entry.retry, attempt });
        });
        return this.finished(entry, decision, reason, kind);
      default:
        // The key is recorded before the ack: at once with a store that answers at once (memory), else after its round trip.
        if (key !== undefined && decision.kind === 'ack') {
          const { keyed } = this;
          if (keyed && !keyed.gate.completeNow(key)) return keyed.ackWhenRecorded(entry, key, action, reason, kind, later);
        }
        if (entry.spans !== undefined && entry.acks.closed) throw this.unsettled(entry, staleDelivery(entry, action));
        this.options.settler.execute(entry, decision, action);
        if (decision.kind === 'ack') this.options.hold?.release();
        return this.finished(entry, decision, reason, kind);
    }
  }

  /**
   * Ends every unsettled delivery (its channel is gone or closing: the broker has it again); returns
   * how many. `flowGone`: nothing will settle them any more (the consumer stopped), so their keys are
   * released; otherwise the flow may still finish one (a late ack still records its key) until its
   * settle deadline, when its key is released as the settle timeout's retry would have.
   */
  endAll(how: string, flowGone = false): number {
    this.deadlines.clear();
    const ended = this.registry.endAll(how);
    if (this.options.tracer !== undefined) for (const entry of ended) if (entry.spans !== undefined) failSpans(entry.spans, `not settled: ${how}`);
    if (this.options.dedupe) this.deadlines.keysOfEnded(ended, flowGone);
    return ended.length;
  }

  /** The consumer has a channel again: the keys of lost channels' deliveries the flow still holds are released as much later as it was gone. */
  channelBack(): void {
    if (this.options.dedupe) this.deadlines.connectionBack();
  }

  /** The consumer stops: no held message runs again; the warnings held back so far are written. */
  stop(): void {
    this.stopping = true;
    this.outcomes.flush();
    this.deadlines.flush();
  }

  /** The ack of a deduplicated delivery once its key is recorded (see KeyedSettles). */
  private recordedAck(entry: TrackedDelivery, action: SettleAction, reason: string, kind: ErrorKind | undefined): SettleOutcome {
    try {
      this.options.settler.execute(entry, { kind: 'ack' }, action);
    } finally {
      this.events.emit('changed');
    }
    this.options.hold?.release();
    return this.finished(entry, { kind: 'ack' }, reason, kind);
  }

  /**
   * A retry tier or a park: the confirmed copy, then the ack. When the copy fails the delivery is not
   * settled: it goes back to the queue after a pause (no hot loop, nothing dropped), and a later settle
   * of it is told so.
   */
  private async settleByCopy(entry: TrackedDelivery, decision: CopyDecision, action: SettleAction, reason: string, kind: ErrorKind | undefined): Promise<SettleOutcome> {
    this.copies += 1;
    try {
      await this.options.settler.copy(entry, decision, action);
    } catch (err) {
      this.copies -= 1;
      this.events.emit('changed'); // nothing was counted: a waiting drain looks again
      if (err instanceof SettleError) throw this.unsettled(entry, err); // stale: the channel is gone, the broker has it
      throw this.unsettled(entry, requeueAfterPause(entry, decision, err, this.registry, this.options));
    }
    this.copies -= 1;
    if (decision.kind === 'park') this.options.hold?.release();
    return this.finished(entry, decision, reason, kind); // counts it, which emits 'changed'
  }

  /** A settle that failed: its spans end failed (when recorded); returns the error to throw. */
  private unsettled(entry: TrackedDelivery, err: SettleError): SettleError {
    if (entry.spans !== undefined) failSpans(entry.spans, err);
    return err;
  }

  /** Counts a settle that is done (its spans end), records its metrics and reports it. */
  private finished(entry: TrackedDelivery, decision: Decision | { kind: 'duplicate' }, reason: string, kind?: ErrorKind): SettleOutcome {
    const outcome = this.outcomes.finished(entry, decision, reason, kind);
    if (entry.spans !== undefined) endSpans(entry.spans, outcome, kind);
    return outcome;
  }
}
