/**
 * A consumer's deliveries from arrival to settlement: registered with their settle timer, decoded
 * into what the flow gets, settled through `decide()` and the settler, and counted.
 */
import type { EventEmitter } from 'node:events';
import type { ConsumeMessage } from 'amqplib';
import type { AckBatcher } from './ack-batcher';
import type { RetryInfo } from './attempts';
import { decide, onArrival, type Decision, type DecisionPolicy } from './decide';
import type { FailureDetails } from './failure';
import type { DeliveryRegistry } from './delivery-registry';
import { toAmqpInfo, type DeliveredMessage } from './message-info';
import { decodePayload } from './payload';
import type { ConsumerSessionEvents, ConsumerSessionOptions } from './session-types';
import { notSettleable, PAST_TENSE, SettleError, type SettleAction, type SettleOutcome, type TrackedDelivery } from './settlement';
import type { Settler } from './settler';

export type DeliveryOptions = Pick<ConsumerSessionOptions, 'settleTimeoutMs' | 'decode' | 'invalidBody' | 'metrics'> & { mainQueue: string };

export class Deliveries {
  readonly counters = { delivered: 0, acked: 0, retried: 0, parked: 0 };

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
    const entry: TrackedDelivery = { id, acks, message, retry, receivedAt, timer: undefined };
    registry.add(entry);
    if (options.settleTimeoutMs > 0) {
      entry.timer = setTimeout(() => void this.onSettleTimeout(id), options.settleTimeoutMs);
      entry.timer.unref?.();
    }
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
   * The one way a delivery is settled (settle nodes, the settle timeout, an invalid body). Throws
   * {@link SettleError} when it cannot be settled (any more).
   */
  async settle(id: string, action: SettleAction, reason = '', failure?: FailureDetails): Promise<SettleOutcome> {
    const { registry } = this;
    const status = registry.status(id);
    if (status.status !== 'live') throw notSettleable(status, id, action);
    const entry = status.entry;
    registry.end(id, PAST_TENSE[action]);
    clearTimeout(entry.timer);
    const decision = decide(this.policy, entry, action, reason, Date.now(), failure);
    try {
      await this.settler.execute(entry, decision, action);
    } catch (err) {
      if (err instanceof SettleError && err.kind === 'broker') {
        // Not settled: the message goes back to the queue, so a later settle must not be told it was.
        registry.end(id, `${decision.kind === 'park' ? 'parking' : 'sending it to retry'} failed, so it goes back to '${this.options.mainQueue}' after a pause`, true);
      }
      throw err;
    }
    const outcome = this.counted(id, decision, entry.retry.attempt);
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

  /** Ends every unsettled delivery (its channel is gone or closing: the broker has it again); returns how many. */
  endAll(how: string): number {
    const gone = this.registry.endAll(how);
    for (const entry of gone) clearTimeout(entry.timer);
    return gone.length;
  }

  private counted(id: string, decision: Decision, attempt: number): SettleOutcome {
    let outcome: SettleOutcome;
    if (decision.kind === 'ack') {
      this.counters.acked += 1;
      outcome = { done: 'acked', attempt };
    } else if (decision.kind === 'park') {
      this.counters.parked += 1;
      // A parked message waits for a human: say so in the log, whatever parked it.
      this.events.emit('warning', `message ${id} parked in '${decision.queue}': ${decision.reason}`);
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
      this.events.emit('warning', `message ${id} was not settled within ${seconds} s: ${outcome.done === 'parked' ? 'parked (attempts exhausted)' : 'sent to retry'}`);
    } catch (err) {
      // Settled in the meantime, or its channel is gone: nothing left to do.
      if (!(err instanceof SettleError)) this.events.emit('error', (err as Error).message);
    }
  }
}
