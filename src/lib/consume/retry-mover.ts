/**
 * The retry mover: brings retries back from quorum retry (tier) queues to the main queue itself,
 * instead of the tier's TTL dead-lettering, which quorum queues do at most once (an expiry during a
 * leader change is dropped).
 *
 * It consumes each tier it serves (see `moverTiers`) on a channel of its own, holds every delivery
 * until it is due ({@link NOT_BEFORE_HEADER}), publishes a copy to the main queue (default exchange,
 * routing key = main queue: the target the tier's dead-letter arguments name) with confirms and
 * `mandatory`, and acks the delivery only after the confirm. A failed publish keeps the delivery
 * unacked and tries again after a pause (never a requeue: on a quorum queue a return counts towards
 * the delivery limit); a lost channel hands the deliveries back to the tier, and the broker delivers
 * them again when the mover consumes anew. The tier's TTL (delay + slack) stays as the fallback.
 *
 * No Node-RED here: the consumer node starts one mover per consumer; several compete on a tier.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage } from 'amqplib';
import { copyPublishOptions, NOT_BEFORE_HEADER, withoutBrokerCounts } from '../message';
import { backoffDelay } from '../backoff';
import type { BrokerConnection } from '../connection';
import { closeChannel } from '../amqp';
import type { Publisher } from '../publish';
import { MOVER_HORIZON_MS, movedByPackage, retryQueueDelays, retryQueueOf, type RetryTopologyConfig } from '../topology';

export interface MoverTier {
  queue: string;
  delayMs: number;
}

/** The tiers the mover serves: quorum tiers on the republish route, delay up to the horizon. Pure. */
export function moverTiers(
  config: Pick<RetryTopologyConfig, 'retryQueue' | 'retryDelaysMs' | 'mainQueueArguments' | 'retryQueueArguments' | 'delayedRetry' | 'retryJitterPercent'>,
): MoverTier[] {
  return retryQueueDelays(config).flatMap((delayMs) => (movedByPackage(config, delayMs) ? [{ queue: retryQueueOf(config, delayMs), delayMs }] : []));
}

/**
 * When a delivery from a tier is due (ms since epoch): its {@link NOT_BEFORE_HEADER}, at once without
 * one, and never later than a full delay from now (a wrong clock must not hold it past the
 * broker's `consumer_timeout`). Pure.
 */
export function dueAt(headers: Record<string, unknown> | undefined, delayMs: number, now: number): number {
  const raw = headers?.[NOT_BEFORE_HEADER];
  const due = typeof raw === 'number' ? raw : typeof raw === 'bigint' ? Number(raw) : NaN;
  if (!Number.isFinite(due)) return now;
  return Math.min(due, now + delayMs);
}

/**
 * The mover's `x-consumer-timeout` on its (quorum) tiers: RabbitMQ 4.3 times quorum consumers out per
 * consumer (basic.cancel). The mover holds a delivery until due, at most a tier's delay (≤ the horizon,
 * 10 min; see dueAt), plus the seconds a failed copy takes to go out: twice the horizon, whatever the
 * broker's `consumer_timeout` (30 min by default, perhaps lower). Quorum queues accept the argument on
 * 3.x and 4.0 too (ignored there).
 */
export const MOVER_CONSUMER_TIMEOUT_MS = 2 * MOVER_HORIZON_MS;

export interface RetryMoverOptions {
  connection: BrokerConnection;
  mainQueue: string;
  tiers: MoverTier[];
  /** Deliveries held per tier at most (the broker's prefetch per consumer). */
  prefetch?: number;
  /** Pause before a failed copy is tried again, and before the first re-consume after a lost channel. */
  retryPauseMs?: number;
}

interface Held {
  channel: Channel;
  message: ConsumeMessage;
  due: number;
}

const REOPEN_BACKOFF = { maxMs: 30_000, factor: 2, jitter: 0.2 };

export class RetryMover extends EventEmitter<{ warning: [string] }> {
  /** Per tier, in arrival order: the head is the earliest due (one delay per tier). */
  private readonly held = new Map<string, Held[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly publisher: Publisher;
  private readonly prefetch: number;
  private readonly pauseMs: number;
  private channel: Channel | undefined;
  private opening = false;
  private started = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  private reopenAttempt = 0;
  private count = 0;
  private lastWarning = '';
  private readonly onConnected = (): void => void this.open();
  private readonly onDisconnected = (): void => this.lost(this.channel);

  constructor(private readonly options: RetryMoverOptions) {
    super();
    this.publisher = options.connection.publisher('retry-mover');
    this.prefetch = options.prefetch ?? 1000;
    this.pauseMs = options.retryPauseMs ?? 1000;
  }

  /** Retries held until they are due (and being copied). */
  get waiting(): number {
    return this.count;
  }

  /** Starts consuming the tiers (again on every reconnect). Idempotent. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.options.connection.on('connected', this.onConnected);
    this.options.connection.on('disconnected', this.onDisconnected);
    void this.open();
  }

  /** Stops: what is held goes back to the tier queues (the channel closes), nothing is lost. */
  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.reopenTimer);
    this.options.connection.off('connected', this.onConnected);
    this.options.connection.off('disconnected', this.onDisconnected);
    const channel = this.channel;
    this.lost(channel);
    if (channel) await closeChannel(channel);
  }

  private async open(): Promise<void> {
    if (!this.started || this.channel || this.opening || !this.options.connection.connection) return;
    this.opening = true;
    let channel: Channel | undefined;
    try {
      channel = await this.options.connection.createChannel();
      const ch = channel;
      ch.on('close', () => {
        if (this.channel !== ch) return;
        this.lost(ch);
        this.scheduleReopen();
      });
      await ch.prefetch(this.prefetch);
      this.channel = ch;
      const consumeOptions = { noAck: false, arguments: { 'x-consumer-timeout': MOVER_CONSUMER_TIMEOUT_MS } };
      for (const tier of this.options.tiers) await ch.consume(tier.queue, (m) => this.onDelivery(ch, tier, m), consumeOptions);
      if (!this.started) await this.stop();
      this.reopenAttempt = 0;
      this.lastWarning = '';
    } catch (err) {
      if (this.channel === channel) this.lost(channel);
      if (channel) await closeChannel(channel);
      if (this.options.connection.connection) {
        this.warn(`retry mover cannot consume the retry queues (${this.options.tiers.map((t) => t.queue).join(', ')}): ${(err as Error).message}; their TTL brings retries back meanwhile`);
        this.scheduleReopen();
      }
    } finally {
      this.opening = false;
    }
  }

  private scheduleReopen(): void {
    if (!this.started || !this.options.connection.connection) return; // `connected` opens again
    this.reopenAttempt += 1;
    clearTimeout(this.reopenTimer);
    this.reopenTimer = setTimeout(() => void this.open(), backoffDelay(this.reopenAttempt, { initialMs: this.pauseMs, ...REOPEN_BACKOFF }));
  }

  /** The channel is gone (or going): its deliveries are the broker's again. */
  private lost(channel: Channel | undefined): void {
    if (!channel || this.channel !== channel) return;
    this.channel = undefined;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.held.clear();
    this.count = 0;
  }

  private onDelivery(channel: Channel, tier: MoverTier, message: ConsumeMessage | null): void {
    if (channel !== this.channel) return;
    if (message === null) {
      // Cancelled by the broker (queue deleted, moved to another node, or a consumer timeout): consume anew later.
      this.warn(`the broker cancelled the retry mover's consumer of '${tier.queue}' (the queue was deleted, its leader moved, or a consumer timeout); its held messages go back to the queue; consuming again`);
      this.lost(channel);
      void closeChannel(channel);
      this.scheduleReopen();
      return;
    }
    const now = Date.now();
    const queue = this.held.get(tier.queue) ?? [];
    this.held.set(tier.queue, queue);
    queue.push({ channel, message, due: dueAt(message.properties.headers, tier.delayMs, now) });
    this.count += 1;
    if (queue.length === 1) this.schedule(tier.queue);
  }

  /** One timer per tier, for its head. */
  private schedule(tierQueue: string): void {
    const head = this.held.get(tierQueue)?.[0];
    if (!head || this.timers.has(tierQueue)) return;
    const timer = setTimeout(() => {
      this.timers.delete(tierQueue);
      this.moveDue(tierQueue);
    }, Math.max(0, head.due - Date.now()));
    this.timers.set(tierQueue, timer);
  }

  private moveDue(tierQueue: string): void {
    const queue = this.held.get(tierQueue);
    if (!queue) return;
    const now = Date.now();
    let n = 0;
    while (n < queue.length && (queue[n]?.due ?? Infinity) <= now) n += 1;
    for (const held of queue.splice(0, n)) void this.move(held);
    this.schedule(tierQueue);
  }

  /** A confirmed copy in the main queue, then the ack; on failure, again after a pause. */
  private async move(held: Held): Promise<void> {
    const { message } = held;
    const p = message.properties;
    // Every header travels (the attempt count is the package's `retry-attempt`), but the tier's own delivery counts.
    const headers = withoutBrokerCounts(Object.assign({}, p.headers));
    const options = copyPublishOptions(p, headers, p.deliveryMode === 2);
    try {
      await this.publisher.publish('', this.options.mainQueue, message.content, options);
    } catch (err) {
      if (held.channel !== this.channel) return; // handed back to the tier already
      this.warn(`retry mover could not bring a retry back to '${this.options.mainQueue}': ${(err as Error).message}; trying again`);
      const timer = setTimeout(() => {
        if (held.channel === this.channel) void this.move(held);
      }, this.pauseMs);
      timer.unref?.();
      return;
    }
    if (held.channel !== this.channel) return; // the tier redelivers it: a duplicate, never a loss
    this.count -= 1;
    try {
      held.channel.ack(message);
    } catch {
      // Channel closed under us: the broker redelivers it.
    }
  }

  /** Once per distinct text, so an outage does not flood the log. */
  private warn(text: string): void {
    if (text === this.lastWarning) return;
    this.lastWarning = text;
    this.emit('warning', text);
  }
}
