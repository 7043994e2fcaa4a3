/**
 * A consumer's deliveries from arrival to settlement. On arrival a delivery is registered under an
 * opaque id with its settle deadline, its body decoded into what the flow gets, and handed on as a
 * `message` event. A settle by id goes through `decide()` and the settler; its outcome is counted and
 * reported. A failed copy (park, retry tier) is handled here, in one place.
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { ConsumeMessage } from 'amqplib';
import { decodePayload, toAmqpInfo, type DecodeMode, type DeliveredMessage, type FailureDetails, type RetryInfo } from '../message';
import { LogLimiter, type QueueCounters } from '../observe';
import {
  decide,
  onArrival,
  PAST_TENSE,
  SettleError,
  staleDelivery,
  type AckTarget,
  type CopyDecision,
  type Decision,
  type DecisionPolicy,
  type InvalidBodyPolicy,
  type OrderedHold,
  type SettleAction,
  type SettleOutcome,
  type Settler,
  type TrackedDelivery,
} from '../settle';
import { notSettleable, type DeliveryRegistry } from './registry';
import type { Settled } from './types';

export interface DeliveriesOptions {
  /** Names the retry configuration on `msg.amqp.config`. */
  configId: string;
  mainQueue: string;
  policy: DecisionPolicy;
  settler: Settler;
  /** Ordered mode's hold (a retry keeps the message at the head and runs it again). */
  hold?: OrderedHold;
  /** A delivery nobody settles within this time is retried; 0 disables the timer. */
  settleTimeoutMs: number;
  decode: DecodeMode;
  invalidBody: InvalidBodyPolicy;
  /** Pause before a delivery whose copy (park, retry tier) failed goes back to the queue. */
  requeuePauseMs: number;
  /** Where settles are counted (Prometheus metrics). */
  metrics?: QueueCounters;
}

export interface DeliveryEvents {
  /** A delivery for the flow. */
  message: [DeliveredMessage];
  /** A body that did not decode, with `invalidBody: 'error'`: the delivery waits to be settled. */
  invalid: [DeliveredMessage, string];
  /** The counters or what is in flight changed: read `counters` / `inFlight` (not computed per event). */
  changed: [];
  /** A delivery was settled; built only when someone listens (the hot path stays cheap). */
  settled: [Settled];
  warning: [string];
  error: [string];
}

export class Deliveries extends EventEmitter<DeliveryEvents> {
  readonly counters = { delivered: 0, acked: 0, retried: 0, parked: 0 };
  /**
   * One timer for the oldest delivery's settle deadline instead of one per delivery: deliveries are
   * registered in arrival order with the same timeout, so the oldest live one is due first.
   */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private copies = 0;
  /** Once stopping, a held message is not run again (it goes back to the queue with the channel). */
  private stopping = false;
  /** A park or a settle timeout is a warning per message, limited so a burst (an outage) cannot flood the log. */
  private readonly parkLog = new LogLimiter(
    (text) => this.emit('warning', text),
    (count, last, ms) => `${count} more message(s) parked in the last ${ms / 1000} s (the last: ${last})`,
  );
  private readonly timeoutLog = new LogLimiter(
    (text) => this.emit('warning', text),
    (count, last, ms) => `${count} more message(s) not settled in time in the last ${ms / 1000} s (the last: ${last})`,
  );

  constructor(
    private readonly registry: DeliveryRegistry<TrackedDelivery>,
    private readonly options: DeliveriesOptions,
  ) {
    super();
  }

  /** Deliveries waiting to be settled. */
  get inFlight(): number {
    return this.registry.size;
  }

  /** Copies (retry tier or parking queue) waiting for their confirm: the delivery is not settled yet. */
  get copying(): number {
    return this.copies;
  }

  /** Names this consumer's delivery ids (see DeliveryRegistry). */
  get token(): string {
    return this.registry.token;
  }

  /** Registers a delivery (with its settle deadline) and hands it to the flow. */
  arrived(acks: AckTarget & { arrived(message: ConsumeMessage): void }, message: ConsumeMessage, retry: RetryInfo, receivedAt: number): void {
    this.counters.delivered += 1;
    acks.arrived(message);
    this.track(acks, message, retry, receivedAt);
  }

  /**
   * The one way a delivery is settled (settle nodes, the settle timeout, an invalid body). Rejects
   * with {@link SettleError} when it cannot be settled (any more). An ack, a dead-letter or a hold is
   * done at once (the hot path: no await); a retry or park by a confirmed copy waits for the confirm.
   */
  settle(id: string, action: SettleAction, reason = '', failure?: FailureDetails): Promise<SettleOutcome> {
    const { registry } = this;
    const entry = registry.entry(id);
    if (!entry) return Promise.reject(notSettleable(registry.ending(id), id, action));
    registry.end(id, PAST_TENSE[action]);
    try {
      const decision = decide(this.options.policy, entry, action, reason, Date.now(), failure);
      switch (decision.kind) {
        case 'republish':
        case 'park':
          return this.settleByCopy(entry, decision, action, reason);
        case 'hold':
          if (entry.acks.closed) throw staleDelivery(entry, action);
          this.options.hold?.hold(entry, decision.reason, (attempt) => {
            if (!this.stopping) this.track(entry.acks, entry.message, { ...entry.retry, attempt }, entry.receivedAt);
          });
          return Promise.resolve(this.finished(entry, decision, reason));
        default:
          this.options.settler.execute(entry, decision, action);
          if (decision.kind === 'ack') this.options.hold?.release();
          return Promise.resolve(this.finished(entry, decision, reason));
      }
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Ends every unsettled delivery (its channel is gone or closing: the broker has it again); returns how many. */
  endAll(how: string): number {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    return this.registry.endAll(how).length;
  }

  /** The consumer stops: no held message runs again; the warnings held back so far are written. */
  stop(): void {
    this.stopping = true;
    this.parkLog.flush();
    this.timeoutLog.flush();
  }

  private track(acks: AckTarget, message: ConsumeMessage, retry: RetryInfo, receivedAt: number): void {
    const { registry, options } = this;
    const id = registry.nextId();
    const deadline = options.settleTimeoutMs > 0 ? performance.now() + options.settleTimeoutMs : Infinity;
    registry.add({ id, acks, message, retry, receivedAt, deadline });
    if (deadline !== Infinity && this.deadlineTimer === undefined) this.armDeadline(deadline);
    const decoded = decodePayload(message.content, message.properties.contentType as string | undefined, options.decode);
    const error = decoded.ok ? undefined : decoded.error;
    const delivered: DeliveredMessage = {
      payload: decoded.ok ? decoded.payload : decoded.raw,
      amqp: toAmqpInfo(id, options.configId, options.mainQueue, message, retry),
      retry,
    };
    this.emit('changed');
    switch (onArrival(error, options.invalidBody)) {
      case 'deliver':
        this.emit('message', delivered);
        break;
      case 'report-invalid':
        this.emit('invalid', delivered, error ?? '');
        break;
      case 'park':
        this.settle(id, 'park', error).catch((err: unknown) => this.emit('error', (err as Error).message));
        break;
    }
  }

  /**
   * A retry tier or a park: the confirmed copy, then the ack. When the copy fails the delivery is not
   * settled: it goes back to the queue after a pause (no hot loop, nothing dropped), and a later settle
   * of it is told so.
   */
  private async settleByCopy(entry: TrackedDelivery, decision: CopyDecision, action: SettleAction, reason: string): Promise<SettleOutcome> {
    this.copies += 1;
    try {
      await this.options.settler.copy(entry, decision, action);
    } catch (err) {
      this.copies -= 1;
      this.emit('changed'); // nothing was counted: a waiting drain looks again
      if (err instanceof SettleError) throw err; // stale: the channel is gone, the broker has it
      throw this.copyFailed(entry, decision, err);
    }
    this.copies -= 1;
    if (decision.kind === 'park') this.options.hold?.release();
    return this.finished(entry, decision, reason); // counts it, which emits 'changed'
  }

  private copyFailed(entry: TrackedDelivery, decision: CopyDecision, err: unknown): SettleError {
    const { mainQueue, requeuePauseMs } = this.options;
    const what = decision.kind === 'park' ? 'park' : 'send to retry';
    this.registry.end(entry.id, `${decision.kind === 'park' ? 'parking' : 'sending it to retry'} failed, so it goes back to '${mainQueue}' after a pause`, true);
    const timer = setTimeout(() => {
      if (entry.acks.closed) return; // the broker has it again already
      try {
        entry.acks.nack(entry.message, true);
      } catch {
        // Channel gone meanwhile: the broker requeues it by itself.
      }
    }, requeuePauseMs);
    timer.unref?.();
    return new SettleError(
      `could not ${what} message ${entry.id} in '${decision.queue}': ${err instanceof Error ? err.message : String(err)}; it goes back to '${mainQueue}' after a pause`,
      'broker',
    );
  }

  /** Counts a settle that is done, records its metrics and reports it. */
  private finished(entry: TrackedDelivery, decision: Decision, reason: string): SettleOutcome {
    const outcome = this.counted(entry.id, decision, entry.retry.attempt);
    this.options.metrics?.record(outcome.done, Date.now() - entry.receivedAt);
    if (this.listenerCount('settled') > 0) {
      const messageId = entry.message.properties.messageId as unknown;
      this.emit('settled', {
        outcome,
        reason: outcome.parkReason ?? reason,
        messageId: typeof messageId === 'string' ? messageId : null,
        durationMs: Date.now() - entry.receivedAt,
      });
    }
    return outcome;
  }

  private counted(id: string, decision: Decision, attempt: number): SettleOutcome {
    let outcome: SettleOutcome;
    if (decision.kind === 'ack') {
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
    this.emit('changed');
    return outcome;
  }

  private armDeadline(at: number): void {
    this.deadlineTimer = setTimeout(() => this.onDeadline(), Math.max(1, Math.ceil(at - performance.now())));
    this.deadlineTimer.unref?.();
  }

  /** Settles every delivery past its deadline (oldest first), then waits for the next one's. */
  private onDeadline(): void {
    this.deadlineTimer = undefined;
    const now = performance.now();
    const due: string[] = [];
    for (const entry of this.registry.oldestFirst()) {
      if (entry.deadline > now) {
        this.armDeadline(entry.deadline);
        break;
      }
      due.push(entry.id);
    }
    for (const id of due) void this.onSettleTimeout(id);
  }

  private async onSettleTimeout(id: string): Promise<void> {
    const seconds = this.options.settleTimeoutMs / 1000;
    try {
      const outcome = await this.settle(id, 'retry', `not settled within ${seconds} s`);
      this.timeoutLog.say(`message ${id} was not settled within ${seconds} s: ${outcome.done === 'parked' ? 'parked (attempts exhausted)' : 'sent to retry'}`);
    } catch (err) {
      // Settled in the meantime, or its channel is gone: nothing left to do.
      if (!(err instanceof SettleError)) this.emit('error', (err as Error).message);
    }
  }
}
