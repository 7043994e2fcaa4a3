/**
 * Consumes the main queue of a retry topology with manual acknowledgement. The session keeps the
 * lifecycle — topology check, channel, consume, re-check backoff, channel loss, pause, stop and its
 * drain — and owns the deliveries (`deliveries`, from arrival to settlement; their events are the
 * messages for the flow), in ordered mode the hold, and the kill switch and the rate limit when on:
 * the kill switch stops consuming as a pause does and probes with prefetch 1 (basic.qos applies to the
 * consumers started after it: cancel, qos, consume; deliveries of the cancelled one still settle).
 *
 * No Node-RED here: the node adapter turns `deliveries`' message events into msgs; a settle by id goes
 * to `deliveries.settle`.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage } from 'amqplib';
import { closeChannel } from '../amqp';
import { backoffDelay } from '../connection';
import { DedupeStoreError, type DedupeGate } from '../dedupe';
import { retryInfo } from '../message';
import { messages, type QueueDepths } from '../observe';
import { AckBatcher, OrderedHold } from '../settle';
import { planTopology, TopologyError, type TopologyPlan } from '../topology';
import { Breaker, type CircuitView } from './breaker';
import type { Deliveries } from './deliveries';
import type { ConsumerDepths } from './depths';
import { Drain } from './drain';
import { consumerDepths, dedupeGate, prepareConsuming, sessionDeliveries, setupFailure } from './session-parts';
import { Throttle } from './throttle';
import type { ConsumerSessionEvents, ConsumerSessionOptions, SessionState, SessionStats, StopOptions } from './types';

const PAUSED: SessionState = { phase: 'paused', detail: 'paused' };
const CIRCUIT_OPEN: SessionState = { phase: 'circuit-open' };

type Delivery = { channel: Channel; acks: AckBatcher; message: ConsumeMessage };
const RECHECK_BACKOFF = { initialMs: 2000, maxMs: 60_000, factor: 2, jitter: 0.1 };

export class ConsumerSession extends EventEmitter<ConsumerSessionEvents> {
  /** The deliveries from arrival to settlement; their `message` events are what the flow gets. */
  readonly deliveries: Deliveries;
  private readonly plan: TopologyPlan;
  private readonly hold: OrderedHold | undefined;
  private readonly queues: ConsumerDepths;
  private readonly drain: Drain;
  private channel: Channel | undefined;
  /** Settles on `channel`; a new one per channel, so a delivery of a lost channel is never settled on the next. */
  private acks: AckBatcher | undefined;
  private consumerTag: string | undefined;
  /** The prefetch set on `channel` (basic.qos), for the consumers started after it. */
  private channelPrefetch: number | undefined;
  private setupAttempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastReported = '';
  private current: SessionState = { phase: 'waiting-for-connection' };
  private settingUp = false;
  /** Why the consumer takes no messages: asked to (a control msg), or its deduplication store is down. */
  private readonly pauses = new Set<'user' | 'store' | 'circuit'>();
  /** The last topology check could not compare arguments (check mode without the management API). */
  private argumentsUnchecked = false;
  private readonly gate: DedupeGate | undefined;
  private readonly breaker: Breaker | undefined;
  private readonly throttle: Throttle<Delivery> | undefined;
  private readonly onConnected = (): void => void this.setup();
  private readonly onDisconnected = (): void => this.lostChannel('connection to the broker lost');
  private readonly onClosing = (): void => void this.acks?.flush();

  constructor(private readonly options: ConsumerSessionOptions) {
    super();
    const { topology, ordered } = options;
    // Ordered across Node-RED instances: the broker feeds one consumer of the queue at a time.
    this.plan = planTopology(ordered ? { ...topology, singleActiveConsumer: true } : topology);
    this.hold = ordered ? new OrderedHold(ordered.pauseMs) : undefined;
    this.hold?.on('blocked', (detail) => this.setState({ phase: 'blocked', detail }));
    this.hold?.on('released', () => {
      if (!this.stopped && this.channel) this.setState(this.pausedState());
    });
    this.gate = dedupeGate(options);
    this.gate?.on('down', (why) => this.storeDown(why));
    this.gate?.on('up', () => this.storeUp());
    this.gate?.on('warning', (text) => this.emit('warning', text));
    this.deliveries = sessionDeliveries(options, this.hold, this.gate);
    this.breaker = options.circuit ? new Breaker(options.circuit, this.deliveries) : undefined;
    this.breaker?.on('change', (change) => {
      if (change.state === 'open') void this.pauseFor('circuit');
      else if (change.previous === 'open') void this.resumeFrom('circuit'); // probing (prefetch 1), or closed by hand
      else void this.reconsume(); // closed after probing: the full prefetch again
      this.emit('circuit', change);
    });
    this.throttle = options.rateLimit ? new Throttle<Delivery>(options.rateLimit, (d) => this.deliver(d.channel, d.acks, d.message)) : undefined;
    this.drain = new Drain(() => this.deliveries.inFlight + this.deliveries.copying);
    this.deliveries.on('changed', () => {
      if (this.paused) void this.applyPause(); // no promise per delivery and settle
      this.drain.changed();
      this.queues.parkedSoFar(this.deliveries.counters.parked); // shows at once
    });
    this.queues = consumerDepths(options);
    this.queues.on('changed', () => this.emit('parking'));
  }

  get state(): SessionState {
    return this.current;
  }

  /** Why the deduplication store is down, while it is (with the `process` policy the consumer goes on unchecked). */
  get dedupeDown(): string | undefined {
    return this.gate?.down;
  }

  private get paused(): boolean {
    return this.pauses.size > 0;
  }

  /** The state of a consumer that has its channel: paused for a reason, or consuming. */
  private pausedState(): SessionState {
    if (this.pauses.has('store')) return { phase: 'store-down', detail: this.gate?.down ?? 'deduplication store down' };
    if (this.pauses.has('user')) return PAUSED;
    return this.pauses.has('circuit') ? CIRCUIT_OPEN : { phase: 'consuming' };
  }

  /** The kill switch, when on. */
  get circuit(): CircuitView | undefined {
    return this.breaker?.view;
  }

  get stats(): SessionStats {
    const stats: SessionStats = { inFlight: this.deliveries.inFlight, waiting: this.deliveries.waiting, ...this.deliveries.counters };
    const parking = this.queues.parking;
    if (parking !== undefined) stats.parkingDepth = parking;
    if (this.argumentsUnchecked) stats.argumentsUnchecked = true;
    if (this.throttle?.held) stats.rateLimited = this.throttle.held;
    return stats;
  }

  /** Depths of the main, retry and parking queues at the last look (every `parkingWatchMs`, and soon after a park). */
  get depths(): QueueDepths | undefined {
    return this.queues.depths;
  }

  /** Looks at the queues' depths now. */
  lookAtQueues(): Promise<QueueDepths | undefined> {
    return this.queues.look();
  }

  start(): void {
    const { connection } = this.options;
    connection.on('connected', this.onConnected);
    connection.on('disconnected', this.onDisconnected);
    connection.on('closing', this.onClosing);
    if (connection.connection) void this.setup();
    const active = (): boolean => !this.stopped && this.current.phase === 'consuming';
    this.queues.start(this.options.parkingWatchMs ?? 0, active);
  }

  /**
   * Stops consuming (basic.cancel), gives the messages the flow holds up to `drainMs` to be settled,
   * then closes the channel: whatever is still unsettled goes back to the queue (the broker
   * redelivers it). Nothing is lost. No drain when `settlePath()` says the flow cannot settle any more.
   */
  async stop(options: StopOptions = {}): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.queues.stop();
    const { connection } = this.options;
    connection.off('connected', this.onConnected);
    this.hold?.drop(); // a held message is not run again: it goes back to the head of the queue
    this.breaker?.stop();
    this.throttle?.drop(); // not handed to the flow: they go back with the channel
    this.deliveries.stop(); // nothing more admitted: what waits for its key goes back with the channel
    const { channel, consumerTag } = this;
    this.consumerTag = undefined;
    this.acks?.flush(); // the acks the flow gave so far go out now, whatever closes the channel later
    const unsettled = await this.drain.stopping(channel && consumerTag ? channel.cancel(consumerTag).catch(() => undefined) : undefined, options);
    if (unsettled) this.emit('warning', unsettled);
    connection.off('disconnected', this.onDisconnected);
    this.deliveries.endAll('returned to the queue when the consumer stopped', true);
    await this.gate?.close(); // the keys of what was recorded or released meanwhile go out first
    await this.closeOwn();
    // Only now: a connection closing while this stop runs still waits for the acks it flushed.
    connection.off('closing', this.onClosing);
    this.setState({ phase: 'stopped' });
  }

  /** Stops taking messages (basic.cancel; in-flight ones are still settled) until resumed, over reconnects too. */
  async pause(): Promise<void> {
    await this.pauseFor('user');
  }

  /** Takes messages again (unless the deduplication store is down: then once it is back); closes the kill switch. */
  async resume(): Promise<void> {
    this.breaker?.reset();
    await this.resumeFrom('user');
  }

  private async pauseFor(reason: 'user' | 'store' | 'circuit'): Promise<void> {
    if (this.pauses.has(reason) || this.stopped) return;
    this.pauses.add(reason);
    this.throttle?.requeue(); // not processed yet: back to the queue
    if (this.channel) this.setState(this.pausedState());
    await this.applyPause();
  }

  private async resumeFrom(reason: 'user' | 'store' | 'circuit'): Promise<void> {
    if (!this.pauses.delete(reason) || this.stopped) return;
    const { channel, acks } = this;
    if (this.paused) {
      if (channel) this.setState(this.pausedState());
      return;
    }
    if (!channel || !acks) return this.setup();
    if (!this.consumerTag) await this.consume(channel, acks).catch(() => undefined); // closed: set up anew
    if (this.consumerTag) this.setState({ phase: 'consuming' });
  }

  /** The deduplication store failed: with the `pause` policy nothing more is taken until it answers. */
  private storeDown(why: string): void {
    this.report(why);
    if (this.options.dedupe?.storeDown === 'pause') void this.pauseFor('store');
    else this.emit('state', this.current); // the status says deduplication is off
  }

  private storeUp(): void {
    this.lastReported = '';
    this.emit('warning', `deduplication store ${this.options.dedupe?.store.description ?? ''} answers again`);
    if (this.pauses.has('store')) void this.resumeFrom('store');
    else this.emit('state', this.current);
  }

  /** Cancels a paused consumer. Ordered: once nothing is in flight, closes the channel, so a held message goes back to
   * the head as the standby gets active (after a cancel alone RabbitMQ 4 feeds the standby the next one at once,
   * and 3.10 never activates it while we hold an unacked message). */
  private async applyPause(): Promise<void> {
    const { channel, consumerTag } = this;
    if (!this.paused || !channel || !consumerTag || (this.hold && this.deliveries.inFlight > 0)) return;
    this.consumerTag = undefined;
    if (this.hold) this.hold.drop();
    await (this.hold ? this.closeOwn() : channel.cancel(consumerTag).catch(() => undefined));
  }

  /** Lets go of the channel — its last acks written first — and closes it: the broker takes back what is unsettled. */
  private async closeOwn(): Promise<void> {
    const channel = this.channel;
    this.acks?.flush();
    this.acks?.close();
    [this.acks, this.channel] = [undefined, undefined];
    if (channel) await closeChannel(channel);
  }

  /** Starts the consumer anew, with the prefetch the kill switch allows now. */
  private async reconsume(): Promise<void> {
    const { channel, acks, consumerTag } = this;
    if (!channel || !acks || !consumerTag || this.paused) return;
    this.consumerTag = undefined;
    await channel.cancel(consumerTag).catch(() => undefined);
    if (this.channel === channel && !this.consumerTag && !this.paused && !this.stopped) await this.consume(channel, acks).catch(() => undefined);
  }

  private async consume(channel: Channel, acks: AckBatcher): Promise<void> {
    const prefetch = this.breaker?.prefetch(this.options.prefetch) ?? this.options.prefetch;
    if (prefetch !== this.channelPrefetch) {
      this.channelPrefetch = prefetch;
      await channel.prefetch(prefetch);
    }
    this.consumerTag = (await channel.consume(this.options.topology.mainQueue, (m) => this.onDelivery(channel, acks, m), { noAck: false })).consumerTag;
  }

  private setState(state: SessionState): void {
    this.current = state;
    this.emit('state', state);
  }

  /** Reports an error once per distinct text, so a waiting consumer does not flood the log. */
  private report(text: string): void {
    if (text === this.lastReported) return;
    this.lastReported = text;
    this.emit('error', text);
  }

  private async setup(): Promise<void> {
    // One setup at a time: a reconnect and a scheduled re-check may both ask for one. None without a
    // connection (a re-check scheduled just before it was lost): its `connected` event starts one.
    if (this.stopped || this.channel || this.settingUp || !this.options.connection.connection) return;
    this.settingUp = true;
    try {
      await this.setupOnce();
    } finally {
      this.settingUp = false;
    }
  }

  private async setupOnce(): Promise<void> {
    clearTimeout(this.retryTimer);
    const { connection, topology } = this.options;
    this.setState({ phase: 'checking-topology' });
    try {
      this.argumentsUnchecked = await prepareConsuming(this.options, this.plan, (warning) => this.emit('warning', warning));
      if (this.stopped || this.channel) return;
      const channel = await connection.createChannel();
      const acks = new AckBatcher(channel);
      this.channel = channel;
      this.acks = acks;
      channel.on('close', () => this.onChannelClosed(channel));
      this.channelPrefetch = undefined;
      if (!this.paused) await this.consume(channel, acks);
      if (this.stopped) return await this.closeOwn(); // stopped while this setup was under way: stop() could not see the channel yet
      this.setupAttempt = 0;
      this.lastReported = '';
      this.setState(this.pausedState());
    } catch (err) {
      if (this.stopped) return;
      if (!connection.connection) {
        // The connection went down during the setup: not the consumer's error; the reconnect sets up again.
        this.channel = undefined;
        this.setState({ phase: 'waiting-for-connection' });
        return;
      }
      const text = setupFailure(err, topology.mainQueue);
      await this.closeOwn();
      if (err instanceof TopologyError) this.setState({ phase: 'topology-error', detail: text, objects: err.objects });
      else this.setState({ phase: err instanceof DedupeStoreError ? 'store-down' : 'channel-lost', detail: text });
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
    this.throttle?.drop();
    this.acks?.close();
    this.acks = undefined;
    this.channel = undefined;
    this.consumerTag = undefined;
    const gone = this.deliveries.endAll(`${why} before it was settled; the broker redelivers it`);
    if (gone > 0) this.emit('warning', `${why}: ${messages(gone, 'unsettled')} will be redelivered by the broker`);
    if (!this.stopped) this.setState({ phase: this.options.connection.connection ? 'channel-lost' : 'waiting-for-connection', detail: why });
    this.drain.changed();
  }

  private onDelivery(channel: Channel, acks: AckBatcher, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer: the queue was deleted (or failed over).
      const text = `queue '${this.options.topology.mainQueue}' was deleted or the broker cancelled the consumer; waiting for it to come back`;
      this.report(text);
      if (this.channel === channel) {
        this.lostChannel(text);
        void closeChannel(channel);
        this.scheduleSetup();
      }
      return;
    }
    if (channel !== this.channel || this.stopped) return acks.arrived(message); // let go of (paused, stopping): the broker requeues it
    if (!this.throttle) return this.deliver(channel, acks, message);
    acks.arrived(message); // unsettled while it waits: no multiple ack covers it
    this.throttle.pass({ channel, acks, message });
  }

  private deliver(channel: Channel, acks: AckBatcher, message: ConsumeMessage): void {
    if (channel !== this.channel || this.stopped) return;
    const { topology } = this.options;
    const retry = retryInfo(message.properties.headers, topology.mainQueue, topology.maxAttempts);
    this.deliveries.arrived(acks, message, this.hold ? this.hold.retryOf(message, retry) : retry, Date.now());
  }
}
