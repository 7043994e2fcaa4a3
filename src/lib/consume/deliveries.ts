/**
 * A consumer's deliveries on arrival: each is registered under an opaque id with its settle deadline,
 * its body decoded into what the flow gets, and handed on as a `message` event — with deduplication
 * on, only once the gate admitted its key (a duplicate is acked without entering the flow). Their
 * settles are its {@link Settles} (`settles.ts`), which the end nodes reach directly: the walk of one
 * message goes on from the flow to there, not back here (docs/architecture.md).
 */
import { EventEmitter } from 'node:events';
import type { ConsumeMessage } from 'amqplib';
import type { ErrorKind } from '../classify';
import type { DeliveredMessage, FailureDetails, RetryInfo } from '../message';
import { onArrival, type AckTarget, type SettleAction, type SettleLater, type SettleOutcome, type TrackedDelivery } from '../settle';
import type { TraceHeaders } from '../trace';
import { Admission, type Arrival } from './admission';
import { deliveredOf } from './delivered';
import { startBatch, startProcess } from './delivery-spans';
import type { DeliveryRegistry } from './registry';
import { Settles } from './settles';
import type { DeliveriesOptions, DeliveryEvents } from './types';

export class Deliveries extends EventEmitter<DeliveryEvents> {
  /** Their settles: what the end nodes call (`session.settles`), and the settle deadlines. */
  readonly settles: Settles;
  /** Deduplication on arrival, when the consumer deduplicates. */
  private readonly admission: Admission | undefined;

  constructor(
    private readonly registry: DeliveryRegistry<TrackedDelivery>,
    private readonly options: DeliveriesOptions,
  ) {
    super();
    this.admission = options.dedupe ? new Admission(options.dedupe) : undefined;
    // Ordered mode's hold runs a held delivery again: a new arrival, under its key (it stays claimed).
    this.settles = new Settles(registry, options, this, (entry, retry) => this.track(entry.acks, entry.message, retry, entry.receivedAt, entry.dedupeKey));
  }

  /** Deliveries received, acked, retried, parked, and duplicates acked without entering the flow. */
  get counters(): Settles['counters'] {
    return this.settles.counters;
  }

  /** Deliveries waiting to be settled. */
  get inFlight(): number {
    return this.registry.size;
  }

  /** Settles under way: copies (retry tier, parking queue) waiting for their confirm, acks waiting for their key to be recorded. */
  get copying(): number {
    return this.settles.copying;
  }

  /** Deliveries waiting for their deduplication key (held by another copy or consumer, or the store), or for its expression. */
  get waiting(): number {
    return this.admission?.waiting ?? 0;
  }

  /** Whether this consumer gave out a delivery id (live, settled, or too old to remember). */
  issued(id: string): boolean {
    return this.registry.issued(id);
  }

  /** Whether a delivery id is waiting to be settled (not settled, not ended with its channel). */
  live(id: string): boolean {
    return this.registry.entry(id) !== undefined;
  }

  /**
   * Batch mode: the span of a batch of these deliveries (`delivery-spans.ts` startBatch), its context for
   * the batch msg; undefined when the consumer records no spans.
   */
  traceBatch(batch: readonly DeliveredMessage[]): TraceHeaders | undefined {
    const { tracer } = this.options;
    if (tracer === undefined) return undefined;
    const entries: TrackedDelivery[] = [];
    for (const delivered of batch) {
      const entry = this.registry.entry(delivered.amqp.deliveryId);
      if (entry !== undefined) entries.push(entry);
    }
    return startBatch(tracer, this.options.mainQueue, entries).trace;
  }

  /** Registers a delivery (with its settle deadline) and hands it to the flow. */
  arrived(acks: AckTarget & { arrived(message: ConsumeMessage): void }, message: ConsumeMessage, retry: RetryInfo, receivedAt: number): void {
    this.counters.delivered += 1;
    acks.arrived(message);
    this.track(acks, message, retry, receivedAt);
  }

  /** {@link Settles.settle}, for a library user that holds the deliveries (the end nodes call `settles` itself). */
  settle(id: string, action: SettleAction, reason = '', failure?: FailureDetails, kind?: ErrorKind, delayMs?: number): Promise<SettleOutcome> {
    return this.settles.settle(id, action, reason, failure, kind, delayMs);
  }

  /** {@link Settles.settleNow}, for a library user that holds the deliveries. */
  settleNow(id: string, action: SettleAction, reason: string, failure: FailureDetails | undefined, kind: ErrorKind | undefined, later: SettleLater, delayMs?: number): SettleOutcome | undefined {
    return this.settles.settleNow(id, action, reason, failure, kind, later, delayMs);
  }

  /** When the longest-held delivery still unsettled arrived (ms since the epoch), undefined when none is. Walks them all: not per message. */
  get heldSince(): number | undefined {
    let oldest: number | undefined;
    for (const entry of this.registry.oldestFirst()) if (oldest === undefined || entry.receivedAt < oldest) oldest = entry.receivedAt;
    return oldest;
  }

  /** Ends every unsettled delivery (see {@link Settles.endAll}); returns how many. */
  endAll(how: string, flowGone = false): number {
    return this.settles.endAll(how, flowGone);
  }

  /** The consumer has a channel again (see {@link Settles.channelBack}). */
  channelBack(): void {
    this.settles.channelBack();
  }

  /** The consumer stops: nothing more is admitted, no held message runs again; the warnings held back so far are written. */
  stop(): void {
    this.settles.stop();
    this.options.dedupe?.gate.endAdmissions();
  }

  /** Decodes a delivery, and hands it to the flow: at once, or once the gate admitted its key (`admitted`: a held message run again). */
  private track(acks: AckTarget, message: ConsumeMessage, retry: RetryInfo, receivedAt: number, dedupeKey?: string): void {
    const { options } = this;
    const id = this.registry.nextId();
    const { delivered, error } = deliveredOf(id, message, retry, options, dedupeKey);
    const entry: TrackedDelivery = { id, acks, message, retry, receivedAt, deadline: Infinity };
    if (dedupeKey !== undefined) entry.dedupeKey = dedupeKey;
    const arrival = onArrival(error, options.invalidBody);
    const admission = this.admission;
    if (arrival !== 'deliver' || !admission || dedupeKey !== undefined) return this.hand(entry, delivered, arrival, error ?? '');
    const now = admission.of(delivered, acks, (outcome) => this.admittedLater(entry, delivered, outcome));
    if (now !== undefined) return this.admitted(entry, delivered, now);
    this.emit('changed');
  }

  /** The gate's answer, once known (called from inside the gate: nothing is thrown there). */
  private admittedLater(entry: TrackedDelivery, delivered: DeliveredMessage, outcome: Arrival): void {
    try {
      this.admitted(entry, delivered, outcome);
    } catch (err) {
      this.emit('error', `message ${entry.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** What the gate's answer calls for: to the flow, acked as a duplicate, parked, or let go of. */
  private admitted(entry: TrackedDelivery, delivered: DeliveredMessage, outcome: Arrival): void {
    switch (outcome.kind) {
      case 'deliver':
        if (outcome.key !== undefined) {
          entry.dedupeKey = outcome.key;
          delivered.amqp.dedupe = { scope: this.options.mainQueue, key: outcome.key };
        }
        return this.hand(entry, delivered, 'deliver', '');
      case 'duplicate':
        return this.settles.duplicate(entry);
      case 'park':
        if (outcome.error !== undefined) this.emit('error', `message ${entry.id}: ${outcome.error}`);
        return this.hand(entry, delivered, 'park', outcome.reason);
      default:
        return undefined; // let go of: the broker has it again
    }
  }

  /** Registers a delivery with its settle deadline and does what its arrival calls for. */
  private hand(entry: TrackedDelivery, delivered: DeliveredMessage, arrival: 'deliver' | 'report-invalid' | 'park', why: string): void {
    const { options } = this;
    entry.deadline = this.settles.deadline();
    if (options.tracer !== undefined) startProcess(options.tracer, options.mainQueue, entry, delivered);
    this.registry.add(entry);
    this.emit('changed');
    switch (arrival) {
      case 'deliver':
        this.emit('message', delivered);
        break;
      case 'report-invalid':
        this.emit('invalid', delivered, why);
        break;
      case 'park':
        this.settles.settle(entry.id, 'park', why).catch((err: unknown) => this.emit('error', (err as Error).message));
        break;
    }
  }
}
