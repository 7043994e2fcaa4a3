/**
 * Consumes the main queue of a retry topology with manual acknowledgement. The session keeps the lifecycle — topology check,
 * consume, pause, stop and its drain — and owns its parts: its
 * channel (`consumer-channel.ts`) and what its loss does (`channel-loss.ts`, a broker's cancel explained by `broker-cancel.ts`), the setups' re-checks (`recheck.ts`), why it pauses (`pauses.ts`), where deliveries enter
 * (`intake.ts`, the channel's consume callback, through the rate limit when on), the deliveries (`deliveries.ts`: their `message`
 * events are the flow's msgs) and their settles (`settles.ts`, which the end nodes call by id), in ordered mode the hold, and the
 * kill switch when on: it stops consuming as a pause does and probes with prefetch 1. No Node-RED here.
 */
import { EventEmitter } from 'node:events';
import type { Channel } from 'amqplib';
import type { DedupeGate } from '../dedupe';
import { OrderedHold, type AckBatcher } from '../settle';
import { planTopology, type TopologyPlan } from '../topology';
import { Breaker, type CircuitView } from './breaker';
import { ConsumerChannel } from './consumer-channel';
import type { Deliveries } from './deliveries';
import type { Settles } from './settles';
import type { ConsumerDepths } from './depths';
import { Drain } from './drain';
import { Intake } from './intake';
import { Pauses, type PauseReason } from './pauses';
import { Recheck } from './recheck';
import { ChannelLoss } from './channel-loss';
import { consumerDepths, dedupeGate, ErrorOnce, failedSetup, mainQueueArguments, prepareConsuming, sessionDeliveries, sessionStats, setupFailure, whenChannelCloses } from './session-parts';
import type { ConsumerSessionEvents, ConsumerSessionOptions, SessionState, SessionStats, StopOptions } from './types';

export class ConsumerSession extends EventEmitter<ConsumerSessionEvents> {
  /** The deliveries on arrival; their `message` events are what the flow gets. */
  readonly deliveries: Deliveries;
  /** The settles of its deliveries by id: what the end nodes call. */
  readonly settles: Settles;
  private readonly plan: TopologyPlan;
  private readonly hold: OrderedHold | undefined;
  /** Depths of the main, retry and parking queues: at the last look (every `parkingWatchMs`, soon after a park or a replay), or now. */
  readonly queues: ConsumerDepths;
  private readonly drain: Drain;
  private readonly own = new ConsumerChannel();
  private readonly recheck = new Recheck(() => void this.setup());
  private readonly pauses = new Pauses();
  private stopped = false;
  /** Errors once per distinct text, so a waiting consumer does not flood the log. */
  private readonly errors = new ErrorOnce((text) => this.emit('error', text));
  private current: SessionState = { phase: 'waiting-for-connection' };
  /** The last topology check could not compare arguments (check mode without the management API). */
  private argumentsUnchecked = false;
  private readonly gate: DedupeGate | undefined;
  private readonly breaker: Breaker | undefined;
  private readonly intake: Intake;
  /** Its channel lost, closed or cancelled by the broker: let go of, said, set up anew. */
  private readonly loss: ChannelLoss;
  private readonly onConnected = (): void => void this.setup();
  private readonly onDisconnected = (): void => this.loss.lostChannel('connection to the broker lost');
  /** The connection closes: the acks given so far go out first; a stopping consumer (its cancel sent) hands back the rest with a nack. */
  private readonly onClosing = (): void => {
    this.own.flush();
    if (this.stopped) this.own.handBack();
  };

  constructor(private readonly options: ConsumerSessionOptions) {
    super();
    const { topology, ordered } = options;
    // Ordered across Node-RED instances: the broker feeds one consumer of the queue at a time.
    this.plan = planTopology(ordered ? { ...topology, singleActiveConsumer: true } : topology);
    this.hold = ordered ? new OrderedHold(ordered.pauseMs) : undefined;
    this.hold?.on('blocked', (detail) => this.setState({ phase: 'blocked', detail })).on('released', () => !this.stopped && this.own.channel && this.setState(this.channelState()));
    this.gate = dedupeGate(options, { down: (why) => this.storeDown(why), up: () => this.storeUp(), warning: (text) => this.emit('warning', text) });
    this.deliveries = sessionDeliveries(options, this.hold, this.gate);
    this.settles = this.deliveries.settles;
    this.breaker = options.circuit ? new Breaker(options.circuit, this.deliveries) : undefined;
    this.breaker?.on('change', (change) => {
      if (change.state === 'open') void this.pauseFor('circuit');
      else if (change.previous === 'open') void this.resumeFrom('circuit'); // probing (prefetch 1), or closed by hand
      else void this.reconsume(); // closed after probing: the full prefetch again
      this.emit('circuit', change);
    });
    this.intake = new Intake(topology, options.rateLimit, this.deliveries, this.hold, (channel) => channel === this.own.channel && !this.stopped, () => this.emit('holding'));
    this.drain = new Drain(() => this.deliveries.inFlight + this.deliveries.copying);
    this.deliveries.on('changed', () => {
      if (this.pauses.any) void this.applyPause(); // no promise per delivery and settle
      this.drain.changed();
      this.queues.parkedSoFar(this.deliveries.counters.parked); // shows at once
    });
    this.queues = consumerDepths(options);
    this.queues.on('changed', () => this.emit('parking'));
    this.loss = new ChannelLoss({
      own: this.own,
      intake: this.intake,
      deliveries: this.deliveries,
      drain: this.drain,
      options,
      stopped: () => this.stopped,
      warn: (text) => this.emit('warning', text),
      lost: (state) => this.setState(state),
      setUpLater: () => this.scheduleSetup(),
    });
  }

  get state(): SessionState { return this.current; }

  /** Why the deduplication store is down, while it is (with the `process` policy the consumer goes on unchecked). */
  get dedupeDown(): string | undefined {
    return this.gate?.down;
  }

  /** The kill switch, when on. */
  get circuit(): CircuitView | undefined {
    return this.breaker?.view;
  }

  get stats(): SessionStats {
    return sessionStats(this.deliveries, this.queues.parking, this.argumentsUnchecked, this.intake.held);
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

  /** Stops consuming (basic.cancel; ordered: none, the close hands the queue over), gives the flow's messages up to `drainMs` to be settled (no drain
   * when `settlePath()` says the flow cannot settle any more), then closes the channel: what is unsettled goes back to the queue. Nothing is lost. */
  async stop(options: StopOptions = {}): Promise<void> {
    this.stopped = true;
    this.recheck.stop();
    this.queues.stop();
    const { connection } = this.options;
    connection.off('connected', this.onConnected);
    this.hold?.drop(); // a held message is not run again: it goes back to the head of the queue
    this.breaker?.stop();
    this.intake.drop(); // not handed to the flow: they go back with the channel
    this.deliveries.stop(); // nothing more admitted: what waits for its key goes back with the channel
    this.own.flush(); // the acks the flow gave so far go out now, whatever closes the channel later
    const unsettled = await this.drain.stopping(this.hold ? undefined : this.own.cancel(), options);
    if (unsettled) this.emit('warning', unsettled);
    connection.off('disconnected', this.onDisconnected);
    this.deliveries.endAll('returned to the queue when the consumer stopped', true);
    await this.gate?.close(); // the keys of what was recorded or released meanwhile go out first
    if (!this.hold) this.own.handBack(); // not failures: a nack, which RabbitMQ 4.3+ does not count (a close would)
    await this.own.close();
    // Only now: a connection closing while this stop runs still waits for the acks it flushed.
    connection.off('closing', this.onClosing);
    this.setState({ phase: 'stopped' });
  }

  /** Stops taking messages (basic.cancel; in-flight ones are still settled) until resumed, over reconnects too. */
  pause(): Promise<void> { return this.pauseFor('user'); }

  /** A partition another instance holds (`members.ts`): paused as by hand (ordered: handed on once nothing is in flight here), or taken again. */
  standby(on: boolean): Promise<void> { return on ? this.pauseFor('standby') : this.resumeFrom('standby'); }

  /** Takes messages again (unless the deduplication store is down: then once it is back); closes the kill switch. */
  async resume(): Promise<void> {
    this.breaker?.reset();
    await this.resumeFrom('user');
  }

  private async pauseFor(reason: PauseReason): Promise<void> {
    if (this.stopped || !this.pauses.add(reason)) return;
    // The cancel goes out first (its frame is written at once), then the rate limit's held ones go back to the queue (a nack,
    // not a failure): after the cancel the broker does not deliver them to us again. Ordered, the channel may close at once.
    const hadChannel = this.own.channel !== undefined;
    const paused = this.applyPause();
    this.intake.requeue();
    if (hadChannel) this.setState(this.channelState());
    await paused;
  }

  private async resumeFrom(reason: PauseReason): Promise<void> {
    if (!this.pauses.remove(reason) || this.stopped) return;
    const { channel, acks } = this.own;
    if (this.pauses.any) {
      if (channel) this.setState(this.channelState());
      return;
    }
    if (!channel || !acks) return this.setup();
    if (!this.own.consuming) await this.consume(channel, acks).catch(() => undefined); // closed: set up anew
    if (this.own.consuming) this.setState({ phase: 'consuming' });
  }

  /** The deduplication store failed: with the `pause` policy nothing more is taken until it answers. */
  private storeDown(why: string): void {
    this.errors.report(why);
    if (this.options.dedupe?.storeDown === 'pause') void this.pauseFor('store');
    else this.emit('state', this.current); // the status says deduplication is off
  }

  private storeUp(): void {
    this.errors.again();
    this.emit('info', `deduplication store ${this.options.dedupe?.store.description ?? ''} answers again`);
    if (this.pauses.has('store')) void this.resumeFrom('store');
    else this.emit('state', this.current);
  }

  /** Cancels a paused consumer. Ordered: once nothing is in flight, closes the channel, so a held message goes back to
   * the head as the standby gets active (after a cancel alone RabbitMQ 4 feeds the standby the next one at once,
   * and 3.10 never activates it while we hold an unacked message). */
  private async applyPause(): Promise<void> {
    if (!this.pauses.any || !this.own.channel || !this.own.consuming || (this.hold && this.deliveries.inFlight > 0)) return;
    if (!this.hold) return this.own.cancel();
    this.own.forgetConsumer();
    this.hold.drop();
    await this.own.close();
  }

  /** Starts the consumer anew, with the prefetch the kill switch allows now (basic.qos applies to the consumers started
   * after it: cancel, qos, consume; deliveries of the cancelled one still settle). */
  private async reconsume(): Promise<void> {
    const { channel, acks } = this.own;
    if (!channel || !acks || !this.own.consuming || this.pauses.any) return;
    await this.own.cancel();
    if (this.own.channel === channel && !this.own.consuming && !this.pauses.any && !this.stopped) await this.consume(channel, acks).catch(() => undefined);
  }

  /** A consumer of the main queue on `channel`, with the prefetch the kill switch allows now. */
  private consume(channel: Channel, acks: AckBatcher): Promise<void> {
    const prefetch = this.breaker?.prefetch(this.options.prefetch) ?? this.options.prefetch;
    return this.own.consume(channel, this.options.topology.mainQueue, prefetch, this.intake.consumer(channel, acks, (gone) => this.loss.cancelledByBroker(gone)));
  }

  private setState(state: SessionState): void {
    this.current = state;
    this.emit('state', state);
  }

  /** The state of a consumer that has its channel: paused (the store down, with why and what kind), or consuming. */
  private channelState(): SessionState {
    return this.pauses.state(this.gate?.down, this.gate?.downProblem);
  }

  private async setup(): Promise<void> {
    // One at a time (`recheck.once`): a reconnect and a re-check may both ask. None without a connection: its `connected` starts one.
    if (this.stopped || this.own.channel || !this.options.connection.connection) return;
    await this.recheck.once(() => this.setupOnce());
  }

  private async setupOnce(): Promise<void> {
    const { connection, topology } = this.options;
    // A re-check after a failure keeps its red status, no yellow `checking` in between: a status node would see it flap.
    if (!failedSetup(this.current)) this.setState({ phase: 'checking-topology' });
    try {
      this.argumentsUnchecked = await prepareConsuming(this.options, this.plan, (warning) => this.emit('warning', warning));
      if (this.stopped || this.own.channel) return;
      const channel = await connection.createChannel();
      const acks = this.own.take(channel, mainQueueArguments(this.plan, topology));
      this.deliveries.channelBack();
      whenChannelCloses(channel, (why, byBroker) => this.loss.channelGone(channel, why, byBroker));
      if (!this.pauses.any) await this.consume(channel, acks);
      if (this.stopped) return await this.own.close(); // stopped while this setup was under way: stop() could not see the channel yet
      this.recheck.succeeded();
      this.errors.again();
      this.queues.lookSoon();
      this.setState(this.channelState());
    } catch (err) {
      if (this.stopped) return;
      if (!connection.connection) {
        // The connection went down during the setup: not the consumer's error; the reconnect sets up again.
        this.own.release();
        this.setState({ phase: 'waiting-for-connection' });
        return;
      }
      const failure = setupFailure(err, topology.mainQueue);
      await this.own.close();
      this.setState(failure);
      this.errors.report(failure.detail);
      this.scheduleSetup();
    }
  }

  /** Topology problems and lost channels are re-checked slowly (`recheck.ts`). */
  private scheduleSetup(): void {
    if (!this.stopped && this.options.connection.connection) this.recheck.schedule();
  }
}
