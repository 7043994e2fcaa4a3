/**
 * A consumer's deliveries from arrival to settlement: registered with their settle timer, decoded
 * into what the flow gets, settled through `decide()` and the settler, and counted.
 */
import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { ConsumeMessage } from 'amqplib';
import type { AckBatcher } from '../settle/ack-batcher';
import type { RetryInfo } from '../message/attempts';
import { decide, onArrival, type CopyDecision, type Decision, type DecisionPolicy } from '../settle/decide';
import type { FailureDetails } from '../message/failure';
import type { DeliveryRegistry } from './registry';
import { toAmqpInfo, type DeliveredMessage } from '../message/message-info';
import { LogLimiter } from '../observe/log-limiter';
import { decodePayload } from '../message/payload';
import type { ConsumerSessionEvents, ConsumerSessionOptions } from './types';
import { notSettleable, PAST_TENSE, SettleError, type SettleAction, type SettleOutcome, type TrackedDelivery } from '../settle/settlement';
import type { Settler } from '../settle/settler';

export type DeliveryOptions = Pick<ConsumerSessionOptions, 'settleTimeoutMs' | 'decode' | 'invalidBody' | 'metrics'> & { mainQueue: string };

export class Deliveries {
  readonly counters = { delivered: 0, acked: 0, retried: 0, parked: 0 };
  /**
   * One timer for the oldest delivery's settle deadline instead of one per delivery: deliveries are
   * registered in arrival order with the same timeout, so the oldest live one is due first.
   */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private copies = 0;
  /** A park or a settle timeout is a warning per message, limited so a burst (an outage) cannot flood the log. */
  private readonly parkLog = new LogLimiter(
    (text) => this.events.emit('warning', text),
    (count, last, ms) => `${count} more message(s) parked in the last ${ms / 1000} s (the last: ${last})`,
  );
  private readonly timeoutLog = new LogLimiter(
    (text) => this.events.emit('warning', text),
    (count, last, ms) => `${count} more message(s) not settled in time in the last ${ms / 1000} s (the last: ${last})`,
  );

  constructor(
    /** Where `message`, `invalid`, `stats`, `warning` and `error` go: the session. */
    private readonly events: EventEmitter<ConsumerSessionEvents>,
    private readonly registry: DeliveryRegistry<TrackedDelivery>,
    private readonly policy: DecisionPolicy,
    private readonly settler: Settler,
    private readonly options: DeliveryOptions,
  ) {}

  /** Deliveries waiting to be settled. */
  get inFlight(): number {
    return this.registry.size;
  }

  /** Registers a delivery (with its settle timer) and hands it to the flow. */
  track(acks: AckBatcher, message: ConsumeMessage, retry: RetryInfo, receivedAt: number): void {
    const { registry, options } = this;
    this.counters.delivered += 1;
    acks.arrived(message);
    const id = registry.nextId();
    const deadline = options.settleTimeoutMs > 0 ? performance.now() + options.settleTimeoutMs : Infinity;
    const entry: TrackedDelivery = { id, acks, message, retry, receivedAt, deadline };
    registry.add(entry);
    if (deadline !== Infinity && this.deadlineTimer === undefined) this.armDeadline(deadline);
    const decoded = decodePayload(message.content, message.properties.contentType as string | undefined, options.decode);
    const error = decoded.ok ? undefined : decoded.error;
    const delivered: DeliveredMessage = {
      payload: decoded.ok ? decoded.payload : decoded.raw,
      amqp: toAmqpInfo(id, options.mainQueue, message, retry),
      retry,
    };
    this.events.emit('stats');
    switch (onArrival(error, options.invalidBody)) {
      case 'deliver':
        this.events.emit('message', delivered);
        break;
      case 'report-invalid':
        this.events.emit('invalid', delivered, error ?? '');
        break;
      case 'park':
        this.settle(id, 'park', error).catch((err: unknown) => this.events.emit('error', (err as Error).message));
        break;
    }
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
      const decision = decide(this.policy, entry, action, reason, Date.now(), failure);
      if (decision.kind === 'republish' || decision.kind === 'park') return this.settleByCopy(entry, decision, action, reason);
      this.settler.execute(entry, decision, action);
      return Promise.resolve(this.finished(entry, decision, reason));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Copies (retry tier or parking queue) waiting for their confirm: the delivery is not settled yet. */
  get copying(): number {
    return this.copies;
  }

  private async settleByCopy(entry: TrackedDelivery, decision: CopyDecision, action: SettleAction, reason: string): Promise<SettleOutcome> {
    this.copies += 1;
    try {
      await this.settler.copy(entry, decision, action);
    } catch (err) {
      this.copies -= 1;
      if (err instanceof SettleError && err.kind === 'broker') {
        // Not settled: the message goes back to the queue, so a later settle must not be told it was.
        this.registry.end(entry.id, `${decision.kind === 'park' ? 'parking' : 'sending it to retry'} failed, so it goes back to '${this.options.mainQueue}' after a pause`, true);
      }
      this.events.emit('stats'); // nothing was counted: a waiting drain looks again
      throw err;
    }
    this.copies -= 1;
    return this.finished(entry, decision, reason); // counts it, which emits 'stats'
  }

  /** Counts a settle that is done, records its metrics and reports it. */
  private finished(entry: TrackedDelivery, decision: Decision, reason: string): SettleOutcome {
    const outcome = this.counted(entry.id, decision, entry.retry.attempt);
    this.options.metrics?.record(outcome.done, Date.now() - entry.receivedAt);
    if (this.events.listenerCount('settled') > 0) {
      const messageId = entry.message.properties.messageId as unknown;
      this.events.emit('settled', {
        outcome,
        reason: outcome.parkReason ?? reason,
        messageId: typeof messageId === 'string' ? messageId : null,
        durationMs: Date.now() - entry.receivedAt,
      });
    }
    return outcome;
  }

  /** Writes the summaries of the warnings held back so far (the consumer stops). */
  flushLogs(): void {
    this.parkLog.flush();
    this.timeoutLog.flush();
  }

  /** Ends every unsettled delivery (its channel is gone or closing: the broker has it again); returns how many. */
  endAll(how: string): number {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    return this.registry.endAll(how).length;
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
    this.events.emit('stats');
    return outcome;
  }

  private async onSettleTimeout(id: string): Promise<void> {
    const seconds = this.options.settleTimeoutMs / 1000;
    try {
      const outcome = await this.settle(id, 'retry', `not settled within ${seconds} s`);
      this.timeoutLog.say(`message ${id} was not settled within ${seconds} s: ${outcome.done === 'parked' ? 'parked (attempts exhausted)' : 'sent to retry'}`);
    } catch (err) {
      // Settled in the meantime, or its channel is gone: nothing left to do.
      if (!(err instanceof SettleError)) this.events.emit('error', (err as Error).message);
    }
  }
}
