/**
 * Consumes the main queue of a retry topology with manual acknowledgement and settles each delivery
 * exactly once: ack, retry (dead-letter to the retry queue, or park once attempts are exhausted), or
 * park (confirmed publish to the parking queue, then ack — never the other way round).
 *
 * No Node-RED here: the node adapter turns `message` events into msgs and calls `settle`.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage, MessageProperties } from 'amqplib';
import { attemptsExhausted, retryInfo, type RetryInfo } from './attempts';
import { backoffDelay } from './backoff';
import type { BrokerConnection } from './broker-connection';
import type { DeliveryRegistry, TakeResult } from './delivery-registry';
import { parkedPublishOptions, pickDefined } from './parking';
import { decodePayload, type DecodeMode } from './payload';
import { applyTopology, TopologyError, type DefinitionReader } from './topology-broker';
import { planTopology, type RetryTopologyConfig, type TopologyPlan } from './topology';

export type SettleAction = 'ack' | 'retry' | 'park';

/** What a delivery becomes on `msg.amqp`: plain data only. */
export interface AmqpInfo {
  deliveryId: string;
  queue: string;
  exchange: string;
  routingKey: string;
  redelivered: boolean;
  deliveryTag: number;
  consumerTag: string;
  /** AMQP properties that were set, headers excluded. */
  properties: Record<string, unknown>;
  headers: Record<string, unknown>;
}

export interface DeliveredMessage {
  payload: unknown;
  amqp: AmqpInfo;
  retry: RetryInfo;
}

export interface SessionStats {
  inFlight: number;
  acked: number;
  retried: number;
  parked: number;
}

export type SessionPhase = 'waiting-for-connection' | 'checking-topology' | 'consuming' | 'topology-error' | 'channel-lost' | 'stopped';

export interface SessionState {
  phase: SessionPhase;
  detail?: string;
}

export type InvalidBodyPolicy = 'park' | 'error';

export interface ConsumerSessionOptions {
  connection: BrokerConnection;
  topology: RetryTopologyConfig;
  registry: DeliveryRegistry<TrackedDelivery>;
  prefetch: number;
  /** A delivery nobody settles within this time is retried; 0 disables the timer. */
  settleTimeoutMs: number;
  decode: DecodeMode;
  /** What happens to a body that does not decode (JSON that does not parse). */
  invalidBody: InvalidBodyPolicy;
  definitionReader?: DefinitionReader;
  /** Pause before a delivery whose parking failed goes back to the queue. */
  parkFailurePauseMs?: number;
}

export interface TrackedDelivery {
  id: string;
  owner: ConsumerSession;
  channel: Channel;
  message: ConsumeMessage;
  retry: RetryInfo;
  timer: NodeJS.Timeout | undefined;
}

export interface SettleOutcome {
  /** What was done: a retry on the last attempt parks, so this can differ from the action asked. */
  done: 'acked' | 'retried' | 'parked';
  attempt: number;
  parkReason?: string;
  /** The parking queue, when parked. */
  parkedTo?: string;
}

export type SettleFailureKind = 'already-settled' | 'stale' | 'unknown' | 'broker';

export class SettleError extends Error {
  constructor(
    message: string,
    readonly kind: SettleFailureKind,
  ) {
    super(message);
    this.name = 'SettleError';
  }
}

export interface ConsumerSessionEvents {
  state: [SessionState];
  stats: [SessionStats];
  message: [DeliveredMessage];
  /** A body that did not decode, with `invalidBody: 'error'`: the delivery waits to be settled. */
  invalid: [DeliveredMessage, string];
  warning: [string];
  error: [string];
}

const PAST_TENSE: Record<SettleAction, string> = { ack: 'acked', retry: 'retried', park: 'parked' };

/** Why a delivery that is no longer live cannot be settled. */
export function notSettleable(taken: TakeResult<TrackedDelivery>, id: string, action: SettleAction): SettleError {
  switch (taken.status) {
    case 'ended':
      return new SettleError(`message ${id} was already settled (${taken.how}); this ${action} is ignored`, 'already-settled');
    case 'stale':
      return new SettleError(`message ${id} cannot be settled any more: ${taken.how}; this ${action} is ignored`, 'stale');
    default:
      return new SettleError(`message ${id} is not known to this consumer (redeployed?); this ${action} is ignored`, 'unknown');
  }
}

const RECHECK_BACKOFF = { initialMs: 2000, maxMs: 60_000, factor: 2, jitter: 0.1 };

export class ConsumerSession extends EventEmitter<ConsumerSessionEvents> {
  private readonly plan: TopologyPlan;
  private channel: Channel | undefined;
  private consumerTag: string | undefined;
  private setupAttempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastReported = '';
  private readonly counters = { acked: 0, retried: 0, parked: 0 };
  private current: SessionState = { phase: 'waiting-for-connection' };
  private readonly onConnected = (): void => void this.setup();
  private readonly onDisconnected = (): void => this.lostChannel('connection to the broker lost');

  constructor(private readonly options: ConsumerSessionOptions) {
    super();
    this.plan = planTopology(options.topology);
  }

  get state(): SessionState {
    return this.current;
  }

  get stats(): SessionStats {
    return { inFlight: this.options.registry.countOf(this), ...this.counters };
  }

  start(): void {
    this.options.connection.on('connected', this.onConnected);
    this.options.connection.on('disconnected', this.onDisconnected);
    if (this.options.connection.connection) void this.setup();
  }

  /**
   * Stops consuming, gives deliveries in flight up to `graceMs` to be settled, then closes the channel:
   * whatever is still unsettled goes back to the queue (the broker redelivers it). Nothing is lost.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.options.connection.off('connected', this.onConnected);
    this.options.connection.off('disconnected', this.onDisconnected);
    const channel = this.channel;
    if (channel && this.consumerTag) await channel.cancel(this.consumerTag).catch(() => undefined);
    const deadline = Date.now() + graceMs;
    while (this.options.registry.countOf(this) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const entry of this.options.registry.endAllOf(this, 'returned to the queue when the consumer stopped')) clearTimeout(entry.timer);
    this.channel = undefined;
    if (channel) await channel.close().catch(() => undefined);
    this.setState({ phase: 'stopped' });
  }

  /** Settles a tracked delivery. Throws {@link SettleError} when it cannot be settled (any more). */
  async settle(id: string, action: SettleAction, reason = ''): Promise<SettleOutcome> {
    const taken = this.options.registry.take(id, PAST_TENSE[action]);
    if (taken.status !== 'live') throw notSettleable(taken, id, action);
    return this.settleEntry(taken.entry, action, reason);
  }

  private setState(state: SessionState): void {
    this.current = state;
    this.emit('state', state);
  }

  private emitStats(): void {
    this.emit('stats', this.stats);
  }

  /** Reports an error once per distinct text, so a waiting consumer does not flood the log. */
  private report(text: string): void {
    if (text === this.lastReported) return;
    this.lastReported = text;
    this.emit('error', text);
  }

  private async setup(): Promise<void> {
    if (this.stopped || this.channel) return;
    clearTimeout(this.retryTimer);
    const connection = this.options.connection;
    this.setState({ phase: 'checking-topology' });
    try {
      const result = await applyTopology(
        (work) => connection.withThrowawayChannel(work),
        this.plan,
        this.options.topology.mode,
        this.options.definitionReader,
      );
      for (const warning of result.warnings) this.emit('warning', warning);
      if (this.stopped || this.channel) return;
      const channel = await connection.createChannel();
      this.channel = channel;
      channel.on('close', () => this.onChannelClosed(channel));
      await channel.prefetch(this.options.prefetch);
      const { consumerTag } = await channel.consume(this.options.topology.mainQueue, (m) => this.onDelivery(channel, m), { noAck: false });
      this.consumerTag = consumerTag;
      this.setupAttempt = 0;
      this.lastReported = '';
      this.setState({ phase: 'consuming' });
      this.emitStats();
    } catch (err) {
      if (this.stopped) return;
      const text = err instanceof TopologyError ? err.message : `cannot consume '${this.options.topology.mainQueue}': ${(err as Error).message}`;
      if (this.channel) {
        const ch = this.channel;
        this.channel = undefined;
        await ch.close().catch(() => undefined);
      }
      this.setState({ phase: err instanceof TopologyError ? 'topology-error' : 'channel-lost', detail: text });
      this.report(text);
      this.scheduleSetup();
    }
  }

  /** Topology problems and lost channels are re-checked slowly: fixing the broker heals the node, without a storm. */
  private scheduleSetup(): void {
    if (this.stopped || !this.options.connection.connection) return;
    this.setupAttempt += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.setup(), backoffDelay(this.setupAttempt, RECHECK_BACKOFF));
  }

  private onChannelClosed(channel: Channel): void {
    if (this.channel !== channel) return;
    this.lostChannel('consumer channel closed');
    this.scheduleSetup();
  }

  private lostChannel(why: string): void {
    this.channel = undefined;
    this.consumerTag = undefined;
    const gone = this.options.registry.endAllOf(this, `${why} before it was settled; the broker redelivers it`);
    for (const entry of gone) clearTimeout(entry.timer);
    if (gone.length > 0) this.emit('warning', `${why}: ${gone.length} unsettled message(s) will be redelivered by the broker`);
    if (!this.stopped) this.setState({ phase: this.options.connection.connection ? 'channel-lost' : 'waiting-for-connection', detail: why });
    this.emitStats();
  }

  private onDelivery(channel: Channel, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer: the queue was deleted (or failed over).
      const text = `queue '${this.options.topology.mainQueue}' was deleted or the broker cancelled the consumer; waiting for it to come back`;
      this.report(text);
      if (this.channel === channel) {
        this.lostChannel(text);
        void channel.close().catch(() => undefined);
        this.scheduleSetup();
      }
      return;
    }
    const { topology, registry } = this.options;
    const retry = retryInfo(message.properties.headers, topology.mainQueue, topology.maxAttempts);
    const id = registry.nextId();
    const entry: TrackedDelivery = { id, owner: this, channel, message, retry, timer: undefined };
    registry.add(entry);
    if (this.options.settleTimeoutMs > 0) {
      entry.timer = setTimeout(() => void this.onSettleTimeout(id), this.options.settleTimeoutMs);
      entry.timer.unref?.();
    }
    const decoded = decodePayload(message.content, message.properties.contentType as string | undefined, this.options.decode);
    const delivered: DeliveredMessage = {
      payload: decoded.ok ? decoded.payload : message.content.toString('utf8'),
      amqp: toAmqpInfo(id, topology.mainQueue, message),
      retry,
    };
    this.emitStats();
    if (decoded.ok) {
      this.emit('message', delivered);
    } else if (this.options.invalidBody === 'error') {
      this.emit('invalid', delivered, decoded.error);
    } else {
      this.settle(id, 'park', decoded.error).catch((err: unknown) => this.emit('error', (err as Error).message));
    }
  }

  private async onSettleTimeout(id: string): Promise<void> {
    const seconds = this.options.settleTimeoutMs / 1000;
    try {
      const outcome = await this.settle(id, 'retry', `not settled within ${seconds} s`);
      this.emit('warning', `message ${id} was not settled within ${seconds} s: ${outcome.done === 'parked' ? 'parked (attempts exhausted)' : 'sent to retry'}`);
    } catch (err) {
      // Settled in the meantime, or its channel is gone: nothing left to do.
      if (!(err instanceof SettleError)) this.emit('error', (err as Error).message);
    }
  }

  private usable(entry: TrackedDelivery): boolean {
    return this.channel === entry.channel && !this.stopped;
  }

  private stale(entry: TrackedDelivery, action: SettleAction): SettleError {
    return new SettleError(
      `message ${entry.id}: its channel was lost before this ${action}; the broker redelivers it (attempt ${entry.retry.attempt} will be repeated)`,
      'stale',
    );
  }

  /** amqplib throws when the channel closed under us: that is a stale delivery, not a crash. */
  private send(entry: TrackedDelivery, action: SettleAction, operation: () => void): void {
    try {
      operation();
    } catch {
      throw this.stale(entry, action);
    }
  }

  private async settleEntry(entry: TrackedDelivery, action: SettleAction, reason: string): Promise<SettleOutcome> {
    clearTimeout(entry.timer);
    if (!this.usable(entry)) throw this.stale(entry, action);
    const { retry } = entry;
    if (action === 'ack') {
      this.send(entry, action, () => entry.channel.ack(entry.message));
      this.counters.acked += 1;
      this.emitStats();
      return { done: 'acked', attempt: retry.attempt };
    }
    if (action === 'retry' && !attemptsExhausted(retry)) {
      // requeue=false: the queue's dead-letter exchange takes it to the retry queue.
      this.send(entry, action, () => entry.channel.nack(entry.message, false, false));
      this.counters.retried += 1;
      this.emitStats();
      return { done: 'retried', attempt: retry.attempt };
    }
    const parkReason =
      action === 'retry'
        ? `max attempts (${retry.maxAttempts}) reached${reason ? `; last error: ${reason}` : ''}`
        : reason || 'parked';
    await this.park(entry, parkReason);
    return { done: 'parked', attempt: retry.attempt, parkReason, parkedTo: this.options.topology.parkingQueue };
  }

  private async park(entry: TrackedDelivery, reason: string): Promise<void> {
    const { message } = entry;
    const { parkingQueue, mainQueue } = this.options.topology;
    try {
      const publisher = await this.options.connection.publisher();
      const options = parkedPublishOptions({
        content: message.content,
        properties: message.properties,
        fields: message.fields,
        mainQueue,
        attempts: entry.retry.attempt,
        reason,
        now: new Date(),
      });
      await publisher.publish('', parkingQueue, message.content, options);
    } catch (err) {
      const text = `could not park message ${entry.id} in '${parkingQueue}': ${(err as Error).message}`;
      this.requeueLater(entry);
      throw new SettleError(`${text}; it goes back to '${mainQueue}' after a pause`, 'broker');
    }
    // Only now, with the parked copy confirmed, may the original go.
    if (!this.usable(entry)) {
      throw new SettleError(
        `message ${entry.id} was parked, but its channel was lost before the ack: the broker redelivers it, so it may be parked twice`,
        'stale',
      );
    }
    this.send(entry, 'park', () => entry.channel.ack(message));
    this.counters.parked += 1;
    this.emitStats();
  }

  /** After a failed park: hand the message back to the queue after a pause (no hot loop, nothing dropped). */
  private requeueLater(entry: TrackedDelivery): void {
    const timer = setTimeout(() => {
      if (this.usable(entry)) {
        try {
          entry.channel.nack(entry.message, false, true);
        } catch {
          // Channel gone: the broker requeues it by itself.
        }
      }
    }, this.options.parkFailurePauseMs ?? 5000);
    timer.unref?.();
  }
}

const PROPERTY_KEYS = [
  'contentType',
  'contentEncoding',
  'deliveryMode',
  'priority',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'timestamp',
  'type',
  'userId',
  'appId',
  'clusterId',
] as const satisfies ReadonlyArray<keyof MessageProperties>;

export function toAmqpInfo(deliveryId: string, queue: string, message: ConsumeMessage): AmqpInfo {
  const properties = pickDefined(message.properties, PROPERTY_KEYS);
  return {
    deliveryId,
    queue,
    exchange: message.fields.exchange,
    routingKey: message.fields.routingKey,
    redelivered: message.fields.redelivered,
    deliveryTag: message.fields.deliveryTag,
    consumerTag: message.fields.consumerTag,
    properties,
    headers: { ...(message.properties.headers ?? {}) },
  };
}
