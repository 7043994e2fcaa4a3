/**
 * Consumes the main queue of a retry topology with manual acknowledgement and settles each delivery
 * exactly once: ack, retry (dead-letter to the retry queue, or park once attempts are exhausted), or
 * park (confirmed publish to the parking queue, then ack — never the other way round).
 *
 * No Node-RED here: the node adapter turns `message` events into msgs and calls `settle`.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage, MessageProperties, Options } from 'amqplib';
import { attemptsExhausted, firstSeenMs, retryInfo, type RetryInfo } from './attempts';
import { backoffDelay } from './backoff';
import type { BrokerConnection } from './broker-connection';
import type { DeliveryRegistry, TakeResult } from './delivery-registry';
import { parkedPublishOptions, pickDefined, retryPublishOptions } from './parking';
import { decodePayload, type DecodeMode } from './payload';
import { applyTopology, TopologyError, type DefinitionReader } from './topology-broker';
import { planTopology, retryQueueFor, retryRoute, type RetryTopologyConfig, type TopologyPlan } from './topology';

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
  /** Messages waiting in the parking queue (from all consumers and the broker), when watched. */
  parkingDepth?: number;
}

export type SessionPhase = 'waiting-for-connection' | 'checking-topology' | 'consuming' | 'blocked' | 'topology-error' | 'channel-lost' | 'stopped';

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
  /**
   * Strict ordered processing: prefetch 1, and a retry keeps the message at the head of the queue and
   * runs it again after `pauseMs`, until it succeeds or is parked.
   */
  ordered?: { pauseMs: number };
  /** How often to look at the parking queue's depth (a passive check); 0: never. */
  parkingWatchMs?: number;
}

export interface TrackedDelivery {
  id: string;
  owner: ConsumerSession;
  channel: Channel;
  message: ConsumeMessage;
  retry: RetryInfo;
  /** When the consumer received it (ms since epoch): the age of a message without other clues. */
  receivedAt: number;
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
  /** The counters changed: read `stats` (not computed per event: it fires on every delivery). */
  stats: [];
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
  /** Ordered mode: the message processing waits on. */
  private blocked: { since: Date; attempt: number; content: Buffer; messageId: unknown } | undefined;
  private parkingDepth: number | undefined;
  private parkingTimer: NodeJS.Timeout | undefined;
  private settingUp = false;
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
    const stats: SessionStats = { inFlight: this.options.registry.countOf(this), ...this.counters };
    if (this.parkingDepth !== undefined) stats.parkingDepth = this.parkingDepth;
    return stats;
  }

  start(): void {
    this.options.connection.on('connected', this.onConnected);
    this.options.connection.on('disconnected', this.onDisconnected);
    if (this.options.connection.connection) void this.setup();
    const every = this.options.parkingWatchMs ?? 0;
    if (every > 0) {
      this.parkingTimer = setInterval(() => void this.watchParking(), every);
      this.parkingTimer.unref?.();
    }
  }

  /** Monitoring: how many messages wait in the parking queue for a human. A passive check, never a declare. */
  private async watchParking(): Promise<void> {
    if (this.stopped || !this.options.connection.connection || this.current.phase !== 'consuming') return;
    try {
      const { messageCount } = await this.options.connection.withThrowawayChannel((ch) => ch.checkQueue(this.options.topology.parkingQueue));
      if (messageCount !== this.parkingDepth) {
        this.parkingDepth = messageCount;
        this.emitStats();
      }
    } catch {
      // Connection or queue gone: the consumer's own checks report that.
    }
  }

  /**
   * Stops consuming and closes the channel: whatever is still unsettled goes back to the queue (the
   * broker redelivers it). Nothing is lost.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.parkingTimer);
    this.options.connection.off('connected', this.onConnected);
    this.options.connection.off('disconnected', this.onDisconnected);
    const channel = this.channel;
    if (channel && this.consumerTag) await channel.cancel(this.consumerTag).catch(() => undefined);
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
    this.emit('stats');
  }

  /** Reports an error once per distinct text, so a waiting consumer does not flood the log. */
  private report(text: string): void {
    if (text === this.lastReported) return;
    this.lastReported = text;
    this.emit('error', text);
  }

  private async setup(): Promise<void> {
    // One setup at a time: a reconnect and a scheduled re-check may both ask for one.
    if (this.stopped || this.channel || this.settingUp) return;
    this.settingUp = true;
    try {
      await this.setupOnce();
    } finally {
      this.settingUp = false;
    }
  }

  private async setupOnce(): Promise<void> {
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
      if (this.stopped) {
        // Stopped while this setup was under way: stop() could not see the channel yet.
        this.channel = undefined;
        await channel.close().catch(() => undefined);
        return;
      }
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
    const { topology } = this.options;
    let retry = retryInfo(message.properties.headers, topology.mainQueue, topology.maxAttempts);
    if (this.options.ordered) {
      // Ordered mode has no attempt limit; a blocked message redelivered after a lost channel keeps its count.
      const blocked = this.blocked;
      const again = blocked !== undefined && blocked.content.equals(message.content) && blocked.messageId === (message.properties.messageId as unknown);
      retry = { ...retry, attempt: again ? blocked.attempt + 1 : 1, maxAttempts: 0, remaining: null };
    }
    this.track(channel, message, retry, Date.now());
  }

  /** Registers a delivery (with its settle timer) and hands it to the flow. */
  private track(channel: Channel, message: ConsumeMessage, retry: RetryInfo, receivedAt: number): void {
    const { topology, registry } = this.options;
    const id = registry.nextId();
    const entry: TrackedDelivery = { id, owner: this, channel, message, retry, receivedAt, timer: undefined };
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
    const { topology } = this.options;
    if (action === 'ack') {
      this.send(entry, action, () => entry.channel.ack(entry.message));
      this.unblock();
      this.counted('acked');
      return { done: 'acked', attempt: retry.attempt };
    }
    if (action === 'retry' && this.options.ordered) {
      this.holdAndRedeliver(entry, reason);
      this.counted('retried');
      return { done: 'retried', attempt: retry.attempt };
    }
    let parkReason = reason || 'parked';
    if (action === 'retry') {
      const lastError = reason ? `; last error: ${reason}` : '';
      if (attemptsExhausted(retry)) {
        parkReason = `max attempts (${retry.maxAttempts}) reached${lastError}`;
      } else if (topology.maxAgeMs > 0 && Date.now() - this.firstSeen(entry) > topology.maxAgeMs) {
        parkReason = `older than the max age of ${topology.maxAgeMs / 1000} s${lastError}`;
      } else {
        await this.sendToRetry(entry);
        this.counted('retried');
        return { done: 'retried', attempt: retry.attempt };
      }
    }
    const { message } = entry;
    const options = parkedPublishOptions({
      content: message.content,
      properties: message.properties,
      fields: message.fields,
      mainQueue: topology.mainQueue,
      attempts: retry.attempt,
      reason: parkReason,
      now: new Date(),
    });
    await this.publishThenAck(entry, topology.parkingQueue, options, 'park');
    this.unblock();
    this.counted('parked');
    return { done: 'parked', attempt: retry.attempt, parkReason, parkedTo: topology.parkingQueue };
  }

  private counted(counter: keyof ConsumerSession['counters']): void {
    this.counters[counter] += 1;
    this.emitStats();
  }

  /** When the message was first seen (ms since epoch); receipt by this consumer when nothing tells. */
  private firstSeen(entry: TrackedDelivery): number {
    const { properties } = entry.message;
    return firstSeenMs(properties.headers, properties.timestamp, this.options.topology.mainQueue) ?? entry.receivedAt;
  }

  /** The next attempt waits in a retry queue: by dead-lettering, or as a confirmed copy in its tier. */
  private async sendToRetry(entry: TrackedDelivery): Promise<void> {
    const { topology } = this.options;
    if (retryRoute(topology) === 'dead-letter') {
      // requeue=false: the queue's dead-letter exchange takes it to the retry queue.
      this.send(entry, 'retry', () => entry.channel.nack(entry.message, false, false));
      return;
    }
    const options = retryPublishOptions(entry.message.properties, entry.retry.attempt, this.firstSeen(entry));
    await this.publishThenAck(entry, retryQueueFor(topology, entry.retry.attempt), options, 'retry');
  }

  /**
   * Publishes a copy (confirmed, mandatory) and only then acks the original: at least once, never
   * lost. When the publish fails the original goes back to its queue after a pause.
   */
  private async publishThenAck(entry: TrackedDelivery, queue: string, options: Options.Publish, action: 'park' | 'retry'): Promise<void> {
    const { message } = entry;
    try {
      const publisher = await this.options.connection.publisher('settle');
      await publisher.publish('', queue, message.content, options);
    } catch (err) {
      this.requeueLater(entry);
      throw new SettleError(
        `could not ${action === 'park' ? 'park' : 'send to retry'} message ${entry.id} in '${queue}': ${(err as Error).message}; it goes back to '${this.options.topology.mainQueue}' after a pause`,
        'broker',
      );
    }
    // Only now, with the copy confirmed, may the original go.
    if (!this.usable(entry)) {
      throw new SettleError(
        `message ${entry.id} was copied to '${queue}', but its channel was lost before the ack: the broker redelivers it, so it may be handled twice`,
        'stale',
      );
    }
    this.send(entry, action, () => entry.channel.ack(message));
  }

  /** After a failed publish: hand the message back to the queue after a pause (no hot loop, nothing dropped). */
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

  /**
   * Ordered mode: the failed message stays at the head of the queue — unacked, so nothing behind it
   * is delivered (prefetch 1) — and goes through the flow again after the pause. It is never returned
   * to the broker, so a quorum queue's delivery limit cannot drop it.
   */
  private holdAndRedeliver(entry: TrackedDelivery, reason: string): void {
    const pauseMs = this.options.ordered?.pauseMs ?? 5000;
    const since = this.blocked?.since ?? new Date();
    this.blocked = { since, attempt: entry.retry.attempt, content: entry.message.content, messageId: entry.message.properties.messageId as unknown };
    this.setState({ phase: 'blocked', detail: `blocked since ${since.toISOString()}, attempt ${entry.retry.attempt}${reason ? `: ${reason}` : ''}` });
    const timer = setTimeout(() => {
      if (!this.usable(entry)) return;
      const attempt = entry.retry.attempt + 1;
      this.track(entry.channel, entry.message, { ...entry.retry, attempt }, entry.receivedAt);
    }, pauseMs);
    timer.unref?.();
  }

  private unblock(): void {
    if (!this.blocked) return;
    this.blocked = undefined;
    if (!this.stopped && this.channel) this.setState({ phase: 'consuming' });
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
